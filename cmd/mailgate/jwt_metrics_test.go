package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JWT roles and /metrics on the real binary, through go-sdk's Streamable
// HTTP client: the email and agent-mail tools on the sandbox, tokens of
// each role and a project claim, then a scrape whose counts must be the
// calls that reached the server.

// jwtWorld is a serve --http with a JWKS file of one ES256 key.
type jwtWorld struct {
	s    *httpServer
	priv *ecdsa.PrivateKey
}

func startJWTServer(t *testing.T, env ...string) *jwtWorld {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, set, 0o600); err != nil {
		t.Fatal(err)
	}
	env = append([]string{"AGENT_MAIL_BEARER_TOKEN=" + httpToken, "MAILGATE_TOOLS=email,agentmail",
		"AGENT_MAIL_JWT_KEY_FILE=" + file, "AGENT_MAIL_JWT_AUDIENCE=mailgate", "MAILGATE_LOG_LEVEL=debug"}, env...)
	return &jwtWorld{s: startHTTPServerHere(t, env...), priv: priv}
}

// token is a JWT of role, limited to projects when given.
func (w *jwtWorld) token(t *testing.T, role string, projects ...string) string {
	t.Helper()
	c := jwt.MapClaims{"sub": "e2e-" + role, "aud": "mailgate", "role": role, "exp": time.Now().Add(time.Hour).Unix()}
	if projects != nil {
		c["projects"] = projects
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = "k1"
	s, err := tok.SignedString(w.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// session connects as token; calls made through it are counted in calls
// (answered ones: by tool, and those with isError apart).
func (w *jwtWorld) session(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-jwt", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: w.s.url,
		HTTPClient: &http.Client{Transport: bearerRoundTripper{token}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tally counts what the server answered, as the metrics must.
type tally struct{ calls, errors map[string]int }

func (tl *tally) call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err // refused before the server: not counted
	}
	tl.calls[tool]++
	if res.IsError {
		tl.errors[tool]++
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

func TestHTTPJWTRolesAndMetrics(t *testing.T) {
	parallel(t)
	w := startJWTServer(t)
	tl := &tally{calls: map[string]int{}, errors: map[string]int{}}
	root := t.TempDir()
	backend, app := filepath.Join(root, "backend"), filepath.Join(root, "app")

	// The static token is an admin: it sets up two projects, an agent in each.
	admin := w.session(t, httpToken)
	for _, p := range []string{backend, app} {
		if _, err := tl.call(t, admin, "ensure_project", map[string]any{"human_key": p}); err != nil {
			t.Fatal(err)
		}
	}
	names := map[string]string{}
	for _, p := range []string{backend, app} {
		text, err := tl.call(t, admin, "register_agent", map[string]any{"project_key": p, "program": "e2e", "model": "m"})
		if err != nil {
			t.Fatal(err)
		}
		var reg struct{ Name string }
		json.Unmarshal([]byte(text), &reg)
		names[p] = reg.Name
	}
	appSlug := strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(app), "-"), "-")

	read := w.session(t, w.token(t, "read"))
	agent := w.session(t, w.token(t, "agent", backend))
	adminJWT := w.session(t, w.token(t, "admin"))
	send := func(project, to string) map[string]any {
		return map[string]any{"project_key": project, "sender_name": names[backend], "to": []string{to}, "subject": "hi", "body_md": "hello"}
	}
	steps := []struct {
		name    string
		cs      *mcp.ClientSession
		tool    string
		args    map[string]any
		refused string
	}{
		{"read fetches", read, "fetch_inbox", map[string]any{"project_key": backend, "agent_name": names[backend]}, ""},
		{"read searches", read, "search_messages", map[string]any{"project_key": backend, "query": "hello"}, ""},
		{"read may not send", read, "send_message", send(backend, names[backend]), "forbidden: send_message needs the agent role; this token has read"},
		{"read may not search email", read, "search_email", map[string]any{"query": "invoice"}, "forbidden: search_email needs the admin role; this token has read"},
		{"agent sends in its project", agent, "send_message", send(backend, names[backend]), ""},
		{"agent fetches in its project", agent, "fetch_inbox", map[string]any{"project_key": backend, "agent_name": names[backend]}, ""},
		{"agent may not touch another project", agent, "fetch_inbox", map[string]any{"project_key": app, "agent_name": names[app]},
			"forbidden: fetch_inbox touches project " + app + ", and this token is limited to the projects " + backend},
		{"nor by its slug", agent, "fetch_inbox", map[string]any{"project_key": appSlug, "agent_name": names[app]}, "touches project " + appSlug},
		{"nor write to it", agent, "send_message", send(backend, names[app]+"@"+appSlug), "touches project " + appSlug},
		{"agent may not use email", agent, "search_email", map[string]any{"query": "invoice"}, "needs the admin role; this token has agent"},
		{"admin JWT uses email", adminJWT, "search_email", map[string]any{"query": "invoice", "max_results": 3}, ""},
		{"admin JWT asks to send email", adminJWT, "send_email", map[string]any{"to": "someone@example.com", "subject": "s", "body": "b"}, ""},
	}
	for _, st := range steps {
		text, err := tl.call(t, st.cs, st.tool, st.args)
		switch {
		case st.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", st.name, err)
		case st.refused != "" && (err == nil || !strings.Contains(err.Error(), st.refused)):
			t.Errorf("%s: got (%.200q, %v), want a refusal containing %q", st.name, text, err, st.refused)
		}
	}
	// A tool error is counted as an error: fetch_inbox of an agent that
	// does not exist.
	if _, err := tl.call(t, read, "fetch_inbox", map[string]any{"project_key": backend, "agent_name": "NoSuchAgent"}); err != nil {
		t.Fatal(err)
	}
	if tl.errors["fetch_inbox"] != 1 {
		t.Fatalf("fetch_inbox of a missing agent: %d errors seen, want 1", tl.errors["fetch_inbox"])
	}

	// Load: four clients at once, as several roles.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 4 {
		cs := []*mcp.ClientSession{read, agent, adminJWT, admin}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_inbox",
					Arguments: map[string]any{"project_key": backend, "agent_name": names[backend], "limit": 1}})
				mu.Lock()
				if err == nil {
					tl.calls["fetch_inbox"]++
				}
				mu.Unlock()
				if err != nil {
					t.Errorf("fetch_inbox under load: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()

	// The scrape: behind the token, exact counts of what was answered.
	if code, _ := httpDo(t, "GET", w.s.base+"/metrics", "", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d", code)
	}
	if code, _ := httpDo(t, "GET", w.s.base+"/metrics", "", map[string]string{"Authorization": "Bearer " + w.token(t, "agent")}); code != http.StatusForbidden {
		t.Errorf("/metrics as an agent JWT: %d", code)
	}
	body := scrape(t, w.s.base+"/metrics", httpToken)
	for _, tool := range []string{"ensure_project", "register_agent", "fetch_inbox", "search_messages", "send_message", "search_email", "send_email"} {
		want := fmt.Sprintf("mailgate_tool_calls_total{tool=%q} %d\n", tool, tl.calls[tool])
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
		want = fmt.Sprintf("mailgate_tool_errors_total{tool=%q} %d\n", tool, tl.errors[tool])
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
		want = fmt.Sprintf("mailgate_tool_call_duration_seconds_count{tool=%q} %d\n", tool, tl.calls[tool])
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, want := range []string{
		"mailgate_tool_calls_total{tool=\"trash_email\"} 0\n", // every tool has its series from the start
		"mailgate_approvals_pending 1\n",                      // the send_email above waits for approval
		"mailgate_send_limit_slots 10\n",
		"mailgate_send_limit_slots_used 0\n",
		"mailgate_store_tx_retries_total ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", body)
	}

	// A tool call's log line and its HTTP request's share one request id.
	logs := w.s.logs()
	m := regexp.MustCompile(`msg="tool call" tool=send_message .*request_id=(\S+)`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no tool call line with a request_id:\n%s", logs)
	}
	if !regexp.MustCompile(`msg="http request" .*request_id=` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(logs) {
		t.Errorf("no http request line with request_id=%s", m[1])
	}
}

func scrape(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// AGENT_MAIL_METRICS_ADDR serves /metrics alone on another loopback
// address, without the token; the main address then has none.
func TestHTTPMetricsAddr(t *testing.T) {
	parallel(t)
	s := startHTTPServerHere(t, "AGENT_MAIL_BEARER_TOKEN="+httpToken, "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_METRICS_ADDR=127.0.0.1:0")
	m := regexp.MustCompile(`metrics="(http://\S+/metrics) \(no authentication\)"`).FindStringSubmatch(s.logs())
	if m == nil {
		t.Fatalf("no metrics URL in the start line:\n%s", s.logs())
	}
	if body := scrape(t, m[1], ""); !strings.Contains(body, `mailgate_tool_calls_total{tool="fetch_inbox"} 0`) {
		t.Errorf("scrape:\n%s", body)
	}
	if code, _ := httpDo(t, "GET", s.base+"/metrics", "", map[string]string{"Authorization": "Bearer " + httpToken}); code != http.StatusNotFound {
		t.Errorf("/metrics on the main address: %d, want 404", code)
	}
}
