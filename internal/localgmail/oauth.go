package localgmail

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A small Google OAuth 2.0 server: the token endpoint (refresh and
// authorization-code grants, AuthStyleInParams or Basic) and an
// authorization endpoint for the installed-app loopback + PKCE flow
// (gmail-api.md §6). Access tokens carry the scopes of the grant that
// produced them; with Options.RequireAuth they gate every Gmail request.

const (
	scopePrefix = "https://www.googleapis.com/auth/"
	scopeFull   = "https://mail.google.com/"
)

type oauthState struct {
	clients       map[string]string // client id → secret; "" accepts any secret
	refresh       map[string]*refreshGrant
	access        map[string]*access
	codes         map[string]*authCode
	ttl           time.Duration
	consent       bool
	consentScopes []string // nil: the user grants every requested scope
}

type refreshGrant struct {
	client  string
	scopes  []string
	revoked bool
}

type access struct {
	client string
	scopes map[string]bool
	expiry time.Time
}

type authCode struct {
	client, redirect, challenge string
	scopes                      []string
	offline, used               bool
	expiry                      time.Time
}

func newOAuthState() *oauthState {
	return &oauthState{clients: map[string]string{}, refresh: map[string]*refreshGrant{}, access: map[string]*access{},
		codes: map[string]*authCode{}, ttl: 3599 * time.Second, consent: true}
}

// normScope expands short names ("gmail.readonly") to full scope URLs.
func normScope(sc string) string {
	if strings.Contains(sc, "://") || sc == "openid" || sc == "email" || sc == "profile" {
		return sc
	}
	return scopePrefix + sc
}

func normScopes(in []string) []string {
	var out []string
	for _, sc := range in {
		if sc = strings.TrimSpace(sc); sc != "" {
			out = append(out, normScope(sc))
		}
	}
	if len(out) == 0 {
		out = []string{scopeFull}
	}
	return out
}

// allows: a token may call a method when it carries one of the scopes
// the discovery document lists for it (discovery.go). The full scope and
// gmail.modify permit most methods because Google lists them, not by a
// rule of this server's: settings.filters.create and delete and
// settings.updateVacation list gmail.settings.basic alone, and
// forwardingAddresses.create and delete gmail.settings.sharing alone.
func (a *access) allows(scopes []string) bool {
	for _, sc := range scopes {
		if a.scopes[normScope(sc)] {
			return true
		}
	}
	return false
}

// metadataOnly: gmail.metadata wins over readonly when both are granted.
func (a *access) metadataOnly() bool {
	return a.scopes[scopePrefix+"gmail.metadata"] && !a.scopes[scopeFull] && !a.scopes[scopePrefix+"gmail.modify"]
}

func (s *Server) authenticate(r *http.Request) (*access, *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		e := apiErr(401, "required", "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
		e.location, e.locationType = "Authorization", "header"
		e.header = http.Header{"Www-Authenticate": {`Bearer realm="https://accounts.google.com/"`}}
		return nil, e
	}
	scheme, tok, _ := strings.Cut(h, " ")
	s.mu.RLock()
	a := s.oa.access[strings.TrimSpace(tok)]
	s.mu.RUnlock()
	if !strings.EqualFold(scheme, "Bearer") || a == nil || !s.now().Before(a.expiry) {
		return nil, authError()
	}
	return a, nil
}

// AddClient registers an OAuth client.
func (s *Server) AddClient(clientID, clientSecret string) {
	s.mu.Lock()
	s.oa.clients[clientID] = clientSecret
	s.mu.Unlock()
}

// IssueRefreshToken returns a refresh token for clientID with the given
// scopes (short "gmail.readonly" or full URLs; none means
// https://mail.google.com/). An unknown client is registered accepting any
// secret.
func (s *Server) IssueRefreshToken(clientID string, scopes ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.oa.clients[clientID]; !ok {
		s.oa.clients[clientID] = ""
	}
	rt := "1//0" + rand.Text() + rand.Text()
	s.oa.refresh[rt] = &refreshGrant{client: clientID, scopes: normScopes(scopes)}
	return rt
}

// IssueAccessToken returns a valid access token directly, for tests that use
// a static token source.
func (s *Server) IssueAccessToken(clientID string, scopes ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, _ := s.newAccessLocked(clientID, normScopes(scopes))
	return tok
}

// RevokeRefreshToken makes later refreshes with rt fail with invalid_grant.
func (s *Server) RevokeRefreshToken(rt string) {
	s.mu.Lock()
	if g := s.oa.refresh[rt]; g != nil {
		g.revoked = true
	}
	s.mu.Unlock()
}

// SetAccessTokenTTL sets the lifetime (expires_in) of access tokens issued
// from now on; default 3599 s. It is sent in whole seconds, at least 1.
func (s *Server) SetAccessTokenTTL(d time.Duration) {
	s.mu.Lock()
	s.oa.ttl = d
	s.mu.Unlock()
}

// ExpireAccessTokens invalidates every access token issued so far.
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	s.oa.access = map[string]*access{}
	s.mu.Unlock()
}

// TokenRequests is the number of requests to /token.
func (s *Server) TokenRequests() int { return s.Calls("token") }

// SetConsent decides how the simulated user answers the consent screen.
func (s *Server) SetConsent(grant bool) {
	s.mu.Lock()
	s.oa.consent = grant
	s.mu.Unlock()
}

// SetConsentScopes simulates granular consent: only requested scopes in
// this list are granted. No arguments restores "grant all".
func (s *Server) SetConsentScopes(scopes ...string) {
	s.mu.Lock()
	s.oa.consentScopes = nil
	if len(scopes) > 0 {
		s.oa.consentScopes = normScopes(scopes)
	}
	s.mu.Unlock()
}

// AuthURL and TokenURL are absolute once Start or SetBaseURL has run.
func (s *Server) AuthURL() string  { return s.URL() + "o/oauth2/auth" }
func (s *Server) TokenURL() string { return s.URL() + "token" }

func expiresIn(ttl time.Duration) int {
	if n := int(ttl / time.Second); n > 0 {
		return n
	}
	return 1
}

func (s *Server) newAccessLocked(client string, scopes []string) (string, int) {
	tok := "ya29.a0" + rand.Text() + rand.Text()
	set := map[string]bool{}
	for _, sc := range scopes {
		set[sc] = true
	}
	n := expiresIn(s.oa.ttl)
	s.oa.access[tok] = &access{client: client, scopes: set, expiry: s.now().Add(time.Duration(n) * time.Second)}
	return tok, n
}

func oauthError(w http.ResponseWriter, status int, code, desc string) int {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	return status
}

// handleToken is POST /token.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) int {
	if r.Method != http.MethodPost {
		return oauthError(w, 405, "invalid_request", "Only POST is supported")
	}
	if err := r.ParseForm(); err != nil {
		return oauthError(w, 400, "invalid_request", "Could not parse the request body")
	}
	f := r.PostForm
	clientID, secret := f.Get("client_id"), f.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok { // AuthStyleInHeader url-encodes both
		clientID, _ = url.QueryUnescape(u)
		secret, _ = url.QueryUnescape(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, known := s.oa.clients[clientID]
	if !known {
		return oauthError(w, 401, "invalid_client", "The OAuth client was not found.")
	}
	if want != "" && secret != want {
		return oauthError(w, 401, "invalid_client", "Unauthorized")
	}
	var scopes []string
	refresh := ""
	switch gt := f.Get("grant_type"); gt {
	case "refresh_token":
		g := s.oa.refresh[f.Get("refresh_token")]
		if g == nil || g.revoked {
			return oauthError(w, 400, "invalid_grant", "Token has been expired or revoked.")
		}
		if g.client != clientID {
			return oauthError(w, 400, "unauthorized_client", "Unauthorized")
		}
		scopes = g.scopes
	case "authorization_code":
		c := s.oa.codes[f.Get("code")]
		switch {
		case c == nil:
			return oauthError(w, 400, "invalid_grant", "Malformed auth code.")
		case c.used || !s.now().Before(c.expiry) || c.client != clientID:
			return oauthError(w, 400, "invalid_grant", "Bad Request")
		case f.Get("redirect_uri") != c.redirect:
			return oauthError(w, 400, "redirect_uri_mismatch", "Bad Request")
		case f.Get("code_verifier") == "":
			return oauthError(w, 400, "invalid_grant", "Missing code verifier.")
		case pkceS256(f.Get("code_verifier")) != c.challenge:
			return oauthError(w, 400, "invalid_grant", "Invalid code verifier.")
		}
		c.used = true
		scopes = c.scopes
		if c.offline {
			refresh = "1//0" + rand.Text() + rand.Text()
			s.oa.refresh[refresh] = &refreshGrant{client: clientID, scopes: scopes}
		}
	default:
		return oauthError(w, 400, "unsupported_grant_type", "Invalid grant_type: "+gt)
	}
	tok, n := s.newAccessLocked(clientID, scopes)
	resp := map[string]any{"access_token": tok, "expires_in": n, "scope": strings.Join(scopes, " "), "token_type": "Bearer"}
	if refresh != "" {
		resp["refresh_token"] = refresh
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, 200, resp)
	return 200
}

func pkceS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func isLoopbackRedirect(u *url.URL) bool {
	h := u.Hostname()
	return u.Scheme == "http" && (h == "127.0.0.1" || h == "localhost" || h == "::1") && u.User == nil && u.Fragment == ""
}

func knownScope(sc string) bool {
	return strings.HasPrefix(sc, scopePrefix) || sc == scopeFull || sc == "openid" || sc == "email" || sc == "profile"
}

// handleAuthorize is GET /o/oauth2/auth. Problems with the client or the
// redirect URI are shown as an error page (Google cannot safely redirect);
// the user's decision goes back to the redirect URI.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) int {
	q := r.URL.Query()
	page := func(status int, code, desc string) int {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>Error %d: %s</title></head><body><h1>Access blocked: authorization error</h1><p>Error %d: %s</p><p>%s</p></body></html>\n",
			status, code, status, html.EscapeString(code), html.EscapeString(desc))
		return status
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := q.Get("client_id")
	if _, ok := s.oa.clients[clientID]; !ok || clientID == "" {
		return page(401, "invalid_client", "The OAuth client was not found.")
	}
	redir, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || !isLoopbackRedirect(redir) {
		return page(400, "redirect_uri_mismatch", "redirect_uri must be a loopback http://127.0.0.1:PORT/ or http://localhost address.")
	}
	scopes := strings.Fields(q.Get("scope"))
	switch {
	case q.Get("response_type") != "code":
		return page(400, "unsupported_response_type", "Only response_type=code is supported.")
	case len(scopes) == 0:
		return page(400, "invalid_request", "Missing required parameter: scope")
	case q.Get("state") == "":
		return page(400, "invalid_request", "Missing required parameter: state")
	case q.Get("code_challenge") == "":
		return page(400, "invalid_request", "Missing required parameter: code_challenge")
	case q.Get("code_challenge_method") != "S256":
		return page(400, "invalid_request", "Invalid code_challenge_method: only S256 is accepted.")
	}
	for _, sc := range scopes {
		if !knownScope(sc) {
			return page(400, "invalid_scope", "Some requested scopes were invalid: "+sc)
		}
	}
	back := func(params url.Values) int {
		v := redir.Query()
		for k, vs := range params {
			v[k] = vs
		}
		u := *redir
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
		return http.StatusFound
	}
	if !s.oa.consent {
		return back(url.Values{"error": {"access_denied"}, "state": {q.Get("state")}})
	}
	granted := scopes
	if s.oa.consentScopes != nil {
		granted = nil
		for _, sc := range scopes {
			for _, ok := range s.oa.consentScopes {
				if sc == ok {
					granted = append(granted, sc)
				}
			}
		}
	}
	code := "4/0A" + rand.Text() + rand.Text()
	s.oa.codes[code] = &authCode{client: clientID, redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		scopes: granted, offline: q.Get("access_type") == "offline", expiry: s.now().Add(10 * time.Minute)}
	return back(url.Values{"code": {code}, "scope": {strings.Join(granted, " ")}, "state": {q.Get("state")}})
}
