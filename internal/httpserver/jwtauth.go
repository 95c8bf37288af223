package httpserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// JWTOptions configure JSON Web Tokens as a second kind of bearer
// credential, beside the static token: a JWT carries a role (read, agent,
// admin) and, optionally, the projects it may touch (roles.go). Exactly one
// of KeyFile and JWKSURL is set.
type JWTOptions struct {
	// KeyFile is a PEM public key (RSA, ECDSA or Ed25519: "PUBLIC KEY" or
	// "RSA PUBLIC KEY", or a certificate) or a JWKS document (JSON, as an
	// identity provider publishes it; "oct" keys there are HMAC secrets).
	KeyFile string
	// JWKSURL is fetched at the first token and cached: fetched again after
	// JWKSRefresh, or sooner when a token names a key id the set lacks (at
	// most once per jwksMinRefetch), so a rotated key is picked up.
	JWKSURL     string
	JWKSRefresh time.Duration // default DefaultJWKSRefresh
	HTTPClient  *http.Client  // for JWKSURL; default one with a 10 s timeout
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer   string
	Audience string
	// Leeway is the clock skew allowed on exp, nbf and iat (default
	// DefaultJWTLeeway).
	Leeway time.Duration
	Logger *slog.Logger
}

// Defaults of JWTOptions.
const (
	DefaultJWKSRefresh = 10 * time.Minute
	DefaultJWTLeeway   = 30 * time.Second
	jwksMinRefetch     = 30 * time.Second
	maxJWKSBytes       = 1 << 20
)

// ErrJWTConfig is wrapped by NewJWTVerifier's errors.
var ErrJWTConfig = errors.New("JWT configuration")

// JWTVerifier checks JWTs and turns their claims into a Principal.
type JWTVerifier struct {
	keys   keySource
	parser *jwt.Parser
}

// tokenClaims are the claims mailgate reads besides the registered ones.
// role may be a string or a list (the highest known role counts); projects
// a string or a list of project keys (absolute paths or slugs).
type tokenClaims struct {
	jwt.RegisteredClaims
	Role  jwt.ClaimStrings `json:"role,omitempty"`
	Roles jwt.ClaimStrings `json:"roles,omitempty"`
	// Projects is read by hand: ClaimStrings reads [] as absent, which
	// here would mean every project.
	Projects json.RawMessage `json:"projects,omitempty"`
}

// NewJWTVerifier loads the key file (or prepares the JWKS URL's cache).
func NewJWTVerifier(o JWTOptions) (*JWTVerifier, error) {
	if (o.KeyFile == "") == (o.JWKSURL == "") {
		return nil, fmt.Errorf("%w: set exactly one of a key file and a JWKS URL", ErrJWTConfig)
	}
	if o.Leeway == 0 {
		o.Leeway = DefaultJWTLeeway
	}
	var src keySource
	if o.KeyFile != "" {
		keys, err := loadKeyFile(o.KeyFile)
		if err != nil {
			return nil, err
		}
		src = staticKeys(keys)
	} else {
		if !strings.HasPrefix(o.JWKSURL, "https://") && !strings.HasPrefix(o.JWKSURL, "http://") {
			return nil, fmt.Errorf("%w: JWKS URL %q is not an http(s) URL", ErrJWTConfig, o.JWKSURL)
		}
		c := o.HTTPClient
		if c == nil {
			c = &http.Client{Timeout: 10 * time.Second}
		}
		refresh := o.JWKSRefresh
		if refresh <= 0 {
			refresh = DefaultJWKSRefresh
		}
		log := o.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		src = &remoteKeys{url: o.JWKSURL, client: c, refresh: refresh, log: log, now: time.Now}
	}
	opts := []jwt.ParserOption{
		// alg "none" and every algorithm no configured key can verify are
		// refused before any key is looked at; keyFor then insists the
		// token's algorithm fits the key it picked (no HMAC over a public
		// key's bytes: algorithm confusion).
		jwt.WithValidMethods(supportedAlgs),
		jwt.WithLeeway(o.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if o.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(o.Issuer))
	}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	return &JWTVerifier{keys: src, parser: jwt.NewParser(opts...)}, nil
}

var supportedAlgs = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512", "EdDSA", "HS256", "HS384", "HS512",
}

// Verify checks token's signature and claims and returns who it speaks
// for. The error says why a token is refused, never what it holds.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Principal, error) {
	var c tokenClaims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) { return v.keyFor(ctx, t) })
	if err != nil {
		return nil, err
	}
	role := RoleNone
	for _, r := range slices.Concat(c.Role, c.Roles) {
		if got, ok := ParseRole(r); ok && got > role {
			role = got
		}
	}
	if role == RoleNone {
		return nil, errors.New(`token has no role claim naming read, agent or admin`)
	}
	p := &Principal{Role: role, Subject: c.Subject}
	if c.Projects != nil {
		var list jwt.ClaimStrings
		if err := json.Unmarshal(c.Projects, &list); err != nil {
			return nil, errors.New("token's projects claim is neither a string nor a list of strings")
		}
		for _, k := range list {
			if strings.TrimSpace(k) != "" {
				p.Projects = append(p.Projects, k)
			}
		}
		if len(p.Projects) == 0 {
			return nil, errors.New("token's projects claim is empty: it could touch no project")
		}
	}
	return p, nil
}

// keyFor picks the verification key(s) for t: those of t's kid (or every
// key when it names none) whose type fits t's algorithm, and whose own alg,
// when the key declares one, is t's.
func (v *JWTVerifier) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	keys, err := v.keys.keys(ctx, kid)
	if err != nil {
		return nil, err
	}
	var fit []jwt.VerificationKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if keyFits(alg, k.Key) {
			fit = append(fit, k.Key)
		}
	}
	switch len(fit) {
	case 0:
		if kid != "" {
			return nil, fmt.Errorf("no configured key with kid %q verifies %s", kid, alg)
		}
		return nil, fmt.Errorf("no configured key verifies %s", alg)
	case 1:
		return fit[0], nil
	}
	return jwt.VerificationKeySet{Keys: fit}, nil
}

// keyFits reports whether key is of the type alg verifies with.
func keyFits(alg string, key any) bool {
	switch key := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		bits := key.Curve.Params().BitSize
		return alg == "ES256" && bits == 256 || alg == "ES384" && bits == 384 || alg == "ES512" && bits == 521
	case ed25519.PublicKey:
		return alg == "EdDSA"
	case []byte:
		return strings.HasPrefix(alg, "HS")
	}
	return false
}

// A key as loaded: its kid and declared alg (from a JWKS) and the
// public key or HMAC secret.
type loadedKey struct {
	KeyID, Algorithm string
	Key              any
}

type keySource interface {
	keys(ctx context.Context, kid string) ([]loadedKey, error)
}

type staticKeys []loadedKey

func (s staticKeys) keys(context.Context, string) ([]loadedKey, error) { return s, nil }

// loadKeyFile reads a JWKS document or a PEM public key.
func loadKeyFile(path string) ([]loadedKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the key file: %w", ErrJWTConfig, err)
	}
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		keys, err := parseJWKS(b)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrJWTConfig, path, err)
		}
		return keys, nil
	}
	var keys []loadedKey
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		k, err := parsePEMKey(blk)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrJWTConfig, path, err)
		}
		keys = append(keys, loadedKey{Key: k})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s holds neither a JWKS document nor a PEM public key", ErrJWTConfig, path)
	}
	return keys, nil
}

func parsePEMKey(blk *pem.Block) (any, error) {
	switch blk.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing the public key: %w", err)
		}
		return k, nil
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(blk.Bytes)
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parsing the certificate: %w", err)
		}
		return c.PublicKey, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a public key (a private key has no place on the server)", blk.Type)
}

// parseJWKS reads a JWKS document with go-jose. Private keys are refused:
// the server only verifies, and a JWKS with private parts is a leak.
func parseJWKS(b []byte) ([]loadedKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("parsing the JWKS: %w", err)
	}
	var keys []loadedKey
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		key := k.Key
		switch kk := key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return nil, fmt.Errorf("key %q in the JWKS is a private key: publish only public keys", k.KeyID)
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		case []byte:
			if len(kk) < 32 {
				return nil, fmt.Errorf("HMAC key %q is %d bytes: at least 32 are needed", k.KeyID, len(kk))
			}
		default:
			continue // a key type JWTs are not verified with
		}
		keys = append(keys, loadedKey{KeyID: k.KeyID, Algorithm: k.Algorithm, Key: key})
	}
	if len(keys) == 0 {
		return nil, errors.New("the JWKS holds no signing key")
	}
	return keys, nil
}

// remoteKeys is a JWKS URL's keys, fetched on demand and cached.
type remoteKeys struct {
	url     string
	client  *http.Client
	refresh time.Duration
	log     *slog.Logger
	now     func() time.Time

	mu      sync.Mutex
	cached  []loadedKey
	fetched time.Time // of the last attempt, successful or not
}

func (r *remoteKeys) keys(ctx context.Context, kid string) ([]loadedKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	stale := r.cached == nil || now.Sub(r.fetched) >= r.refresh
	unknown := kid != "" && !slices.ContainsFunc(r.cached, func(k loadedKey) bool { return k.KeyID == kid })
	if stale || unknown && now.Sub(r.fetched) >= jwksMinRefetch {
		keys, err := r.fetch(ctx)
		r.fetched = now
		switch {
		case err == nil:
			r.cached = keys
		case r.cached == nil:
			return nil, err
		default:
			r.log.Warn("fetching the JWKS failed; keeping the keys fetched before", "url", r.url, "err", err)
		}
	}
	return r.cached, nil
}

func (r *remoteKeys) fetch(ctx context.Context) ([]loadedKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching the JWKS: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the JWKS: %s answered %s", r.url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("fetching the JWKS: %w", err)
	}
	return parseJWKS(b)
}
