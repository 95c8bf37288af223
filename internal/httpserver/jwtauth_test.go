package httpserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The JWT roles through the real protocol: a go-sdk client over Streamable
// HTTP calls tools standing for each kind (an email tool, a read-only and
// a writing agent-mail tool, a channels tool on the server's project), as
// tokens of each role and project claim.

// roleTools are the tools of roleServer and what each asks of a JWT, as
// cmd/mailgate builds them from the inventory.
var roleTools = map[string]ToolRule{
	"send_email":                {Role: RoleAdmin},
	"fetch_inbox":               {Role: RoleRead, ProjectArgs: []string{"project_key"}},
	"send_message":              {Role: RoleAgent, ProjectArgs: []string{"project_key"}, AddressArgs: []string{"to", "cc", "bcc"}},
	"uninstall_precommit_guard": {Role: RoleAgent, PathArgs: []string{"code_repo_path"}},
	"claim_files":               {Role: RoleAgent, Project: "/srv/channels"},
	"fetch_inbox_product":       {Role: RoleRead, Products: true},
}

// roleServer answers every tool of roleTools with "ok <name>" and counts
// the calls that reached it.
func roleServer(reached *atomic.Int64) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "roles", Version: "0"}, nil)
	for name := range roleTools {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				reached.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + name}}}, nil
			})
	}
	return s
}

// testProjects resolves project keys as the agent-mail store would: the
// slug "backend" is /srv/backend's, "app" is /srv/app's; an absolute path
// is cleaned; anything else names no project.
func testProjects(_ context.Context, key string) (string, error) {
	switch key {
	case "backend":
		return "/srv/backend", nil
	case "app":
		return "/srv/app", nil
	}
	if strings.HasPrefix(key, "/") {
		return path.Clean(key), nil
	}
	return "", errors.New("no such project")
}

type keyPair struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newKey(t *testing.T, kid string) keyPair {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{kid: kid, priv: priv}
}

func jwksJSON(t *testing.T, keys ...keyPair) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claims are a valid token's: an hour left, issuer and audience as
// startRoles configures them.
func claims(role string, projects ...string) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "agent-7", "iss": "https://idp.test", "aud": "mailgate",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	if role != "" {
		c["role"] = role
	}
	if projects != nil {
		c["projects"] = projects
	}
	return c
}

func (k keyPair) sign(t *testing.T, c jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startRoles serves roleServer with JWTs verified against keys (a JWKS
// file), issuer https://idp.test and audience mailgate.
func startRoles(t *testing.T, reached *atomic.Int64, keys ...keyPair) *running {
	t.Helper()
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, jwksJSON(t, keys...), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := NewJWTVerifier(JWTOptions{KeyFile: file, Issuer: "https://idp.test", Audience: "mailgate"})
	if err != nil {
		t.Fatal(err)
	}
	return start(t, Options{Server: roleServer(reached), BearerToken: testToken, JWT: v, Tools: roleTools, ProjectKey: testProjects,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "metrics here") })})
}

// call calls tool with args as token; it returns the answer's text, or the
// error's.
func call(t *testing.T, base, token, tool string, args map[string]any) (string, error) {
	t.Helper()
	cs := connect(t, bearerClient(token), base+DefaultPath, false, "")
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func TestJWTRoles(t *testing.T) {
	var reached atomic.Int64
	key := newKey(t, "k1")
	r := startRoles(t, &reached, key)
	proj := map[string]any{"project_key": "/srv/backend"}

	tests := []struct {
		role, tool string
		args       map[string]any
		refused    string // "" = allowed
	}{
		{"read", "fetch_inbox", proj, ""},
		{"read", "send_message", proj, "forbidden: send_message needs the agent role; this token has read"},
		{"read", "send_email", nil, "forbidden: send_email needs the admin role; this token has read"},
		{"agent", "fetch_inbox", proj, ""},
		{"agent", "send_message", proj, ""},
		{"agent", "claim_files", nil, ""},
		{"agent", "send_email", nil, "forbidden: send_email needs the admin role; this token has agent"},
		{"admin", "send_email", nil, ""},
		{"admin", "send_message", proj, ""},
		{"admin", "no_such_tool", nil, "unknown tool"}, // passed to the server, which refuses it
		{"agent", "no_such_tool", nil, "forbidden: no_such_tool needs the admin role"},
		{"reader", "fetch_inbox", proj, ""}, // the reference server's names
		{"reader", "send_message", proj, "needs the agent role; this token has read"},
		{"writer", "send_message", proj, ""},
		{"writer", "send_email", nil, "needs the admin role; this token has agent"},
	}
	for _, tc := range tests {
		t.Run(tc.role+"/"+tc.tool, func(t *testing.T) {
			before := reached.Load()
			text, err := call(t, r.base, key.sign(t, claims(tc.role)), tc.tool, tc.args)
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused == "" && text != "ok "+tc.tool:
				t.Fatalf("answer %q", text)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("got (%q, %v), want a refusal containing %q", text, err, tc.refused)
			}
			if got := reached.Load() - before; (tc.refused == "") != (got == 1) {
				t.Errorf("the tool ran %d times", got)
			}
		})
	}
	// The static token is an admin.
	if text, err := call(t, r.base, testToken, "send_email", nil); err != nil || text != "ok send_email" {
		t.Errorf("static token: (%q, %v)", text, err)
	}
}

// A refusal is an HTTP 403 whose JSON-RPC error names the role needed,
// answering the refused request's id.
func TestJWTRefusalIsHTTP403(t *testing.T) {
	var reached atomic.Int64
	key := newKey(t, "k1")
	r := startRoles(t, &reached, key)
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"send_email","arguments":{}}}`
	code, _, got := rawRequest(t, "POST", r.base+DefaultPath, body, mcpHeaders(key.sign(t, claims("read"))))
	if code != http.StatusForbidden || !strings.Contains(got, `"id":42`) ||
		!strings.Contains(got, "forbidden: send_email needs the admin role; this token has read (admin: every tool, email included)") {
		t.Fatalf("got %d %s", code, got)
	}
	// A batch is refused when any message in it is.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},` + strings.TrimSuffix(body, "") + `]`
	if code, _, got := rawRequest(t, "POST", r.base+DefaultPath, batch, mcpHeaders(key.sign(t, claims("agent")))); code != http.StatusForbidden {
		t.Fatalf("batch: got %d %s", code, got)
	}
	// Keys as go-sdk reads them: exactly, and never twice.
	for name, body := range map[string]string{
		"Method shadowing method": `{"jsonrpc":"2.0","id":7,"method":"tools/call","Method":"ping","params":{"name":"send_email","arguments":{}}}`,
		"method twice":            `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","arguments":{}},"method":"ping"}`,
		"name twice":              `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_email","name":"fetch_inbox","arguments":{}}}`,
		"not JSON":                `{"jsonrpc":"2.0","id":7,"method":"tools/call",`,
	} {
		code, _, got := rawRequest(t, "POST", r.base+DefaultPath, body, mcpHeaders(key.sign(t, claims("read"))))
		if code != http.StatusForbidden {
			t.Errorf("%s: got %d %s", name, code, got)
		}
	}
	// /metrics is an admin's.
	for role, want := range map[string]int{"read": 403, "agent": 403, "admin": 200} {
		code, _, got := rawRequest(t, "GET", r.base+MetricsPath, "", map[string]string{"Authorization": "Bearer " + key.sign(t, claims(role))})
		if code != want {
			t.Errorf("/metrics as %s: %d %s", role, code, got)
		}
	}
	if reached.Load() != 0 {
		t.Errorf("%d refused calls reached a tool", reached.Load())
	}
}

func TestJWTProjectClaim(t *testing.T) {
	var reached atomic.Int64
	key := newKey(t, "k1")
	r := startRoles(t, &reached, key)
	backend := key.sign(t, claims("agent", "/srv/backend"))
	bySlug := key.sign(t, claims("agent", "backend"))

	tests := []struct {
		name, token, tool string
		args              map[string]any
		refused           string
	}{
		{"own project by path", backend, "send_message", map[string]any{"project_key": "/srv/backend"}, ""},
		{"own project by slug", backend, "send_message", map[string]any{"project_key": "backend"}, ""},
		{"claim by slug, key by path", bySlug, "fetch_inbox", map[string]any{"project_key": "/srv/backend/"}, ""},
		{"other project", backend, "send_message", map[string]any{"project_key": "/srv/app"},
			"forbidden: send_message touches project /srv/app, and this token is limited to the projects /srv/backend"},
		{"other project by slug", backend, "fetch_inbox", map[string]any{"project_key": "app"}, "touches project app"},
		{"other project, key in another case", backend, "fetch_inbox", map[string]any{"PROJECT_KEY": "/srv/app"}, "touches project /srv/app"},
		{"dot-dot out of the project", backend, "fetch_inbox", map[string]any{"project_key": "/srv/backend/../app"}, "touches project"},
		{"unknown slug", backend, "fetch_inbox", map[string]any{"project_key": "nope"}, "touches project nope"},
		{"recipient in another project", backend, "send_message", map[string]any{"project_key": "/srv/backend", "to": []string{"BlueLake@app"}}, "touches project app"},
		{"recipients as one string", backend, "send_message", map[string]any{"project_key": "/srv/backend", "cc": "BlueLake, RedFox@/srv/app"}, "touches project /srv/app"},
		{"recipient in the project", backend, "send_message", map[string]any{"project_key": "/srv/backend", "to": []string{"BlueLake", "RedFox@backend"}}, ""},
		{"guard path inside", backend, "uninstall_precommit_guard", map[string]any{"code_repo_path": "/srv/backend/sub"}, ""},
		{"guard path outside", backend, "uninstall_precommit_guard", map[string]any{"code_repo_path": "/srv/backendx"}, "in none of this token's projects"},
		{"server's project (channels)", backend, "claim_files", nil, "touches project /srv/channels"},
		{"server's project allowed", key.sign(t, claims("agent", "/srv/channels")), "claim_files", nil, ""},
		{"a product's projects", backend, "fetch_inbox_product", map[string]any{"product_key": "widget-bus"},
			"forbidden: fetch_inbox_product reaches every project linked to a product, and this token is limited to the projects /srv/backend"},
		{"a product's projects, no project claim", key.sign(t, claims("read")), "fetch_inbox_product", map[string]any{"product_key": "widget-bus"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := reached.Load()
			text, err := call(t, r.base, tc.token, tc.tool, tc.args)
			switch {
			case tc.refused == "" && (err != nil || text != "ok "+tc.tool):
				t.Fatalf("got (%q, %v), want it allowed", text, err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("got (%q, %v), want a refusal containing %q", text, err, tc.refused)
			}
			if got := reached.Load() - before; (tc.refused == "") != (got == 1) {
				t.Errorf("the tool ran %d times", got)
			}
		})
	}
}

// Tokens that must not pass, each answered 401 with the reason.
func TestJWTRefusedTokens(t *testing.T) {
	var reached atomic.Int64
	key := newKey(t, "k1")
	r := startRoles(t, &reached, key)
	other := newKey(t, "k1") // same kid, another key

	// Any RSA key signs the wrong-algorithm token: the smallest Go makes
	// (a 2048-bit one took ~0.1 s of the package's ~1 s of CPU).
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	exp := func(c jwt.MapClaims, k string, v any) jwt.MapClaims { c[k] = v; return c }
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims("admin")).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	// Algorithm confusion: HS256 keyed with the server's public key, which
	// an attacker knows.
	pub, _ := x509.MarshalPKIXPublicKey(&key.priv.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("admin"))
	hs.Header["kid"] = "k1"
	confused, err := hs.SignedString(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	rs := jwt.NewWithClaims(jwt.SigningMethodRS256, claims("admin"))
	rs.Header["kid"] = "k1"
	wrongAlg, err := rs.SignedString(rsaKey)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct{ name, token, why string }{
		{"expired", key.sign(t, exp(claims("admin"), "exp", time.Now().Add(-time.Hour).Unix())), "token is expired"},
		{"not yet valid", key.sign(t, exp(claims("admin"), "nbf", time.Now().Add(time.Hour).Unix())), "token is not valid yet"},
		{"no exp", key.sign(t, func() jwt.MapClaims { c := claims("admin"); delete(c, "exp"); return c }()), "exp claim is required"},
		{"wrong key", other.sign(t, claims("admin")), "signature is invalid"},
		{"unknown kid", newKey(t, "k9").sign(t, claims("admin")), `no configured key with kid "k9"`},
		{"alg none", none, "signing method none is invalid"},
		{"HS256 over the public key", confused, "no configured key with kid \"k1\" verifies HS256"},
		{"RS256 against an EC key", wrongAlg, "verifies RS256"},
		{"wrong issuer", key.sign(t, exp(claims("admin"), "iss", "https://evil.test")), "token has invalid issuer"},
		{"wrong audience", key.sign(t, exp(claims("admin"), "aud", "other")), "token has invalid audience"},
		{"no role", key.sign(t, claims("")), "no role claim"},
		{"unknown role", key.sign(t, claims("root")), "no role claim"},
		{"null projects", key.sign(t, exp(claims("admin"), "projects", nil)), "projects claim is"},
		{"projects a number", key.sign(t, exp(claims("admin"), "projects", 7)), "projects claim is neither"},
		{"empty projects", key.sign(t, exp(claims("admin"), "projects", []string{})), "projects claim is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := rawRequest(t, "POST", r.base+DefaultPath, initBody, mcpHeaders(tc.token))
			var answer errorBody
			json.Unmarshal([]byte(body), &answer)
			if msg := answer.Error.Message; code != http.StatusUnauthorized || !strings.HasPrefix(msg, "unauthorized: the JWT was refused: ") || !strings.Contains(msg, tc.why) {
				t.Fatalf("got %d %s, want 401 saying %q", code, body, tc.why)
			}
			if !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate %q", hdr.Get("WWW-Authenticate"))
			}
		})
	}
	if reached.Load() != 0 {
		t.Errorf("%d calls reached a tool", reached.Load())
	}
}

// A JWKS URL is fetched once and cached; a token naming a key id the set
// lacks has it fetched again (a rotated key), at most once per
// jwksMinRefetch.
func TestJWKSURL(t *testing.T) {
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	var published atomic.Pointer[[]byte]
	var fetches atomic.Int64
	set := jwksJSON(t, k1)
	published.Store(&set)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(*published.Load())
	}))
	defer idp.Close()
	v, err := NewJWTVerifier(JWTOptions{JWKSURL: idp.URL, HTTPClient: idp.Client()})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	v.keys.(*remoteKeys).now = func() time.Time { return clock }
	var reached atomic.Int64
	r := start(t, Options{Server: roleServer(&reached), BearerToken: testToken, JWT: v, Tools: roleTools, ProjectKey: testProjects})

	for range 3 {
		if _, err := call(t, r.base, k1.sign(t, claims("read")), "fetch_inbox", nil); err != nil {
			t.Fatal(err)
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches for three calls with one key, want 1", fetches.Load())
	}
	// k2 is not published yet: refused, and not fetched again at once.
	code, _, body := rawRequest(t, "POST", r.base+DefaultPath, initBody, mcpHeaders(k2.sign(t, claims("read"))))
	if code != http.StatusUnauthorized || !strings.Contains(body, `kid \"k2\"`) {
		t.Fatalf("unpublished key: %d %s", code, body)
	}
	rotated := jwksJSON(t, k1, k2)
	published.Store(&rotated)
	clock = clock.Add(jwksMinRefetch)
	if _, err := call(t, r.base, k2.sign(t, claims("read")), "fetch_inbox", nil); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if fetches.Load() != 2 {
		t.Errorf("%d fetches, want 2 (the first; k2 again once %s had passed)", fetches.Load(), jwksMinRefetch)
	}
}

func TestJWTKeyFiles(t *testing.T) {
	dir := t.TempDir()
	k := newKey(t, "")
	pub, _ := x509.MarshalPKIXPublicKey(&k.priv.PublicKey)
	privDER, _ := x509.MarshalECPrivateKey(k.priv)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	privJWKS, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.priv, KeyID: "p"}}})
	tests := []struct {
		name string
		file string
		err  string
	}{
		{"PEM public key", write("pub.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})), ""},
		{"PEM private key", write("priv.pem", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: privDER})), "not a public key"},
		{"JWKS with a private key", write("priv.json", privJWKS), "is a private key"},
		{"short HMAC key", write("oct.json", []byte(`{"keys":[{"kty":"oct","kid":"h","k":"c2hvcnQ"}]}`)), "at least 32 are needed"},
		{"not a key", write("junk.txt", []byte("hello")), "neither a JWKS document nor a PEM public key"},
		{"missing", filepath.Join(dir, "nope"), "reading the key file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewJWTVerifier(JWTOptions{KeyFile: tc.file})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				// A PEM key has no kid: a token naming none is verified with it.
				tok, _ := jwt.NewWithClaims(jwt.SigningMethodES256, claims("agent")).SignedString(k.priv)
				if p, err := v.Verify(context.Background(), tok); err != nil || p.Role != RoleAgent {
					t.Fatalf("Verify: %+v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrJWTConfig) {
				t.Fatalf("got %v, want %q", err, tc.err)
			}
		})
	}
	// An HMAC key from a JWKS verifies HS256 and nothing else.
	secret := []byte("0123456789abcdef0123456789abcdef")
	octJWKS, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: secret, KeyID: "h", Algorithm: "HS256"}}})
	v, err := NewJWTVerifier(JWTOptions{KeyFile: write("oct-ok.json", octJWKS)})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("read", "/srv/app")).SignedString(secret)
	if p, err := v.Verify(context.Background(), tok); err != nil || p.Role != RoleRead || len(p.Projects) != 1 {
		t.Fatalf("HS256: %+v, %v", p, err)
	}
	tok, _ = jwt.NewWithClaims(jwt.SigningMethodHS512, claims("read")).SignedString(secret)
	if _, err := v.Verify(context.Background(), tok); err == nil {
		t.Fatal("HS512 verified by a key declared HS256")
	}
}
