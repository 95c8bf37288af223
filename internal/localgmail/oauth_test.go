package localgmail

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/mailgate/mailgate/internal/testutil"
)

// authServer is a started RequireAuth server on the real clock (x/oauth2
// computes expiry from the real clock too).
func authServer(t *testing.T) (*Server, string) {
	t.Helper()
	s := New(Options{RequireAuth: true, Now: time.Now})
	base := startServer(t, s)
	s.AddClient("cid", "csecret")
	return s, base
}

func oauthConfig(s *Server, scopes ...string) *oauth2.Config {
	return &oauth2.Config{ClientID: "cid", ClientSecret: "csecret", Scopes: scopes,
		RedirectURL: "http://127.0.0.1:5555/callback",
		Endpoint:    oauth2.Endpoint{AuthURL: s.AuthURL(), TokenURL: s.TokenURL(), AuthStyle: oauth2.AuthStyleInParams}}
}

func tokenService(t *testing.T, base string, ts oauth2.TokenSource) *gmail.Service {
	t.Helper()
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(base), option.WithTokenSource(ts))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestRefreshFlow(t *testing.T) {
	t.Parallel()
	// The server's clock, moved on by hand where the TTL must run out.
	clock := testutil.NewClock(time.Now())
	s := New(Options{RequireAuth: true, Now: clock.Now})
	base := startServer(t, s)
	s.AddClient("cid", "csecret")
	mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"), "INBOX")
	rt := s.IssueRefreshToken("cid", "gmail.readonly", "https://www.googleapis.com/auth/gmail.compose")
	cfg := oauthConfig(s)
	ctx := context.Background()
	svc := tokenService(t, base, cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}))

	for i := 0; i < 3; i++ {
		if _, err := svc.Users.Messages.List("me").Do(); err != nil {
			t.Fatal(err)
		}
	}
	if s.TokenRequests() != 1 {
		t.Errorf("token requests = %d, want 1 (cached access token)", s.TokenRequests())
	}
	_, err := svc.Users.Labels.Create("me", &gmail.Label{Name: "x"}).Do()
	wantAPIError(t, err, 403, "insufficientPermissions", "Request had insufficient authentication scopes.")

	// Server-side expiry: the client still believes its token, and gets 401.
	s.ExpireAccessTokens()
	_, err = svc.Users.Messages.List("me").Do()
	wantAPIError(t, err, 401, "authError", authErrorMessage)
	if ge := gerr(t, err); ge.Header.Get("WWW-Authenticate") != `Bearer realm="https://accounts.google.com/", error="invalid_token"` {
		t.Errorf("WWW-Authenticate = %q", ge.Header.Get("WWW-Authenticate"))
	}
	// forcing a refresh (an expired copy of the token) recovers
	svc = tokenService(t, base, cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)}))
	if _, err := svc.Users.Messages.List("me").Do(); err != nil {
		t.Fatal(err)
	}

	// a short TTL: expires_in follows it, and the server enforces it
	s.SetAccessTokenTTL(time.Second)
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
	if err != nil || time.Until(tok.Expiry) > 2*time.Second {
		t.Fatalf("short-TTL token: %v, expires in %v", err, time.Until(tok.Expiry))
	}
	static := tokenService(t, base, oauth2.StaticTokenSource(tok))
	if _, err := static.Users.GetProfile("me").Do(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1100 * time.Millisecond)
	_, err = static.Users.GetProfile("me").Do()
	wantAPIError(t, err, 401, "authError", "")

	s.RevokeRefreshToken(rt)
	svc = tokenService(t, base, cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: rt}))
	_, err = svc.Users.Messages.List("me").Do()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || re.ErrorDescription != "Token has been expired or revoked." || re.Response.StatusCode != 400 {
		t.Fatalf("after revoke: %T %v", err, err)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	s, base := authServer(t)
	rt := s.IssueRefreshToken("cid")
	post := func(form url.Values, basic bool) (int, string) {
		req, _ := http.NewRequest("POST", s.TokenURL(), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth("cid", "csecret")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := res.Body.Read(buf)
		b.Write(buf[:n])
		return res.StatusCode, b.String()
	}
	ok := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"cid"}, "client_secret": {"csecret"}}
	with := func(k, v string) url.Values {
		f := url.Values{}
		for key, vs := range ok {
			f[key] = vs
		}
		f.Set(k, v)
		return f
	}
	for _, c := range []struct {
		name  string
		form  url.Values
		basic bool
		code  int
		want  string
	}{
		{"refresh", ok, false, 200, `"token_type":"Bearer"`},
		{"basic auth style", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}, true, 200, `"expires_in":3599`},
		{"wrong secret", with("client_secret", "nope"), false, 401, `"error":"invalid_client"`},
		{"unknown client", with("client_id", "who"), false, 401, `"error":"invalid_client"`},
		{"unknown refresh token", with("refresh_token", "1//0zzz"), false, 400, `"error":"invalid_grant"`},
		{"bad grant type", with("grant_type", "password"), false, 400, `"error":"unsupported_grant_type"`},
	} {
		if code, body := post(c.form, c.basic); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
	if _, body := post(ok, false); strings.Contains(body, "refresh_token") || !strings.Contains(body, `"scope":"https://mail.google.com/"`) {
		t.Errorf("refresh response should carry the scope and no refresh_token: %s", body)
	}
	// no credentials at all
	res, err := http.Get(base + "gmail/v1/users/me/profile")
	if err != nil || res.StatusCode != 401 {
		t.Fatalf("no token: %v %v", err, res.Status)
	}
	res.Body.Close()
	// a token fault speaks OAuth, not Gmail
	s.Inject(Fault{Op: "token", Status: 503})
	if code, body := post(ok, false); code != 503 || !strings.Contains(body, `"error":"server_error"`) {
		t.Errorf("token fault: %d %s", code, body)
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	s, base := authServer(t)
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"), "INBOX")
	ops := map[string]func(*gmail.Service) error{
		"list": func(g *gmail.Service) error { _, e := g.Users.Messages.List("me").Do(); return e },
		"get": func(g *gmail.Service) error {
			_, e := g.Users.Messages.Get("me", m.Id).Format("metadata").Do()
			return e
		},
		"send": func(g *gmail.Service) error {
			_, e := g.Users.Messages.Send("me", &gmail.Message{Raw: "%%"}).Do()
			return e
		},
		"draft":  func(g *gmail.Service) error { _, e := g.Users.Drafts.Get("me", "r-1").Do(); return e },
		"insert": func(g *gmail.Service) error { _, e := g.Users.Messages.Insert("me", &gmail.Message{}).Do(); return e },
		"labels": func(g *gmail.Service) error { _, e := g.Users.Labels.List("me").Do(); return e },
		"mklbl":  func(g *gmail.Service) error { _, e := g.Users.Labels.Create("me", &gmail.Label{}).Do(); return e },
		"prof":   func(g *gmail.Service) error { _, e := g.Users.GetProfile("me").Do(); return e },
	}
	cases := []struct {
		scopes  []string
		allowed string // ops not listed must get 403 insufficientPermissions
	}{
		{[]string{"gmail.readonly"}, "list get draft labels prof"},
		{[]string{"gmail.compose"}, "send draft prof"},
		{[]string{"gmail.send"}, "send"},
		{[]string{"gmail.insert"}, "insert"},
		{[]string{"gmail.labels"}, "labels mklbl"},
		{[]string{"gmail.metadata"}, "list get labels prof"},
		{[]string{"gmail.modify"}, "list get send draft insert labels mklbl prof"},
		{[]string{"https://mail.google.com/"}, "list get send draft insert labels mklbl prof"},
	}
	for _, c := range cases {
		svc := tokenService(t, base, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.IssueAccessToken("cid", c.scopes...)}))
		for name, op := range ops {
			err := op(svc)
			denied := err != nil && gerr(t, err).Code == 403 && gerr(t, err).Errors[0].Reason == "insufficientPermissions"
			if want := !strings.Contains(" "+c.allowed+" ", " "+name+" "); denied != want {
				t.Errorf("scopes %v, op %s: denied=%v want %v (%v)", c.scopes, name, denied, want, err)
			}
		}
	}
	// gmail.metadata wins over readonly: no q, no full/raw
	svc := tokenService(t, base, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.IssueAccessToken("cid", "gmail.readonly", "gmail.metadata")}))
	_, err := svc.Users.Messages.List("me").Q("x").Do()
	wantAPIError(t, err, 403, "forbidden", "Metadata scope does not support 'q' parameter")
	_, err = svc.Users.Messages.Get("me", m.Id).Do()
	wantAPIError(t, err, 403, "forbidden", "Metadata scope doesn't allow format FULL")
	if _, err := svc.Users.Messages.Get("me", m.Id).Format("metadata").Do(); err != nil {
		t.Error(err)
	}
}

// authorize follows the consent screen and returns the redirect's query.
func authorize(t *testing.T, authURL string) (int, url.Values) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		return res.StatusCode, nil
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Port() != "5555" || loc.Path != "/callback" {
		t.Fatalf("redirect to %q", res.Header.Get("Location"))
	}
	return res.StatusCode, loc.Query()
}

func TestAuthorizationCodePKCE(t *testing.T) {
	t.Parallel()
	s, base := authServer(t)
	ctx := context.Background()
	cfg := oauthConfig(s, "https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/gmail.compose")
	v := oauth2.GenerateVerifier()
	start := func(opts ...oauth2.AuthCodeOption) url.Values {
		_, q := authorize(t, cfg.AuthCodeURL("st8", append([]oauth2.AuthCodeOption{oauth2.S256ChallengeOption(v)}, opts...)...))
		if q.Get("state") != "st8" {
			t.Fatalf("state = %q", q.Get("state"))
		}
		return q
	}
	retrieveErr := func(err error, code, desc string) {
		t.Helper()
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != code || (desc != "" && re.ErrorDescription != desc) {
			t.Errorf("want %s %q, got %v", code, desc, err)
		}
	}

	q := start(oauth2.AccessTypeOffline, oauth2.ApprovalForce)
	code := q.Get("code")
	_, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	retrieveErr(err, "invalid_grant", "Invalid code verifier.")
	_, err = cfg.Exchange(ctx, code)
	retrieveErr(err, "invalid_grant", "Missing code verifier.")
	other := *cfg
	other.RedirectURL = "http://127.0.0.1:6666/"
	_, err = other.Exchange(ctx, code, oauth2.VerifierOption(v))
	retrieveErr(err, "redirect_uri_mismatch", "")

	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(v))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.Expiry.IsZero() || !strings.Contains(tok.Extra("scope").(string), "gmail.compose") {
		t.Errorf("token: %+v scope=%v", tok, tok.Extra("scope"))
	}
	_, err = cfg.Exchange(ctx, code, oauth2.VerifierOption(v))
	retrieveErr(err, "invalid_grant", "") // codes are single use

	svc := tokenService(t, base, cfg.TokenSource(ctx, tok))
	if _, err := svc.Users.Messages.List("me").Do(); err != nil {
		t.Fatal(err)
	}

	// without access_type=offline Google issues no refresh token
	q = start()
	if tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(v)); err != nil || tok.RefreshToken != "" {
		t.Errorf("online access: %v refresh=%q", err, tok.RefreshToken)
	}
	// granular consent: the user unticks compose
	s.SetConsentScopes("gmail.readonly")
	q = start(oauth2.AccessTypeOffline)
	if q.Get("scope") != "https://www.googleapis.com/auth/gmail.readonly" {
		t.Errorf("granted scope = %q", q.Get("scope"))
	}
	s.SetConsentScopes()
	// denied consent
	s.SetConsent(false)
	if q = start(); q.Get("error") != "access_denied" || q.Get("code") != "" {
		t.Errorf("denied: %v", q)
	}
	s.SetConsent(true)

	// problems the consent screen refuses to redirect for
	bad := func(mut func(u url.Values)) int {
		u, _ := url.Parse(cfg.AuthCodeURL("st8", oauth2.S256ChallengeOption(v)))
		qv := u.Query()
		mut(qv)
		u.RawQuery = qv.Encode()
		code, _ := authorize(t, u.String())
		return code
	}
	for name, c := range map[string]struct {
		mut  func(url.Values)
		code int
	}{
		"unknown client":      {func(q url.Values) { q.Set("client_id", "nobody") }, 401},
		"non-loopback":        {func(q url.Values) { q.Set("redirect_uri", "https://app.example.com/cb") }, 400},
		"no PKCE":             {func(q url.Values) { q.Del("code_challenge") }, 400},
		"plain PKCE":          {func(q url.Values) { q.Set("code_challenge_method", "plain") }, 400},
		"no scope":            {func(q url.Values) { q.Del("scope") }, 400},
		"unknown scope":       {func(q url.Values) { q.Set("scope", "https://evil.example.com/all") }, 400},
		"token response type": {func(q url.Values) { q.Set("response_type", "token") }, 400},
		"localhost is fine":   {func(q url.Values) { q.Set("redirect_uri", "http://localhost:5555/callback") }, 302},
	} {
		if got := bad(c.mut); got != c.code {
			t.Errorf("%s: status %d, want %d", name, got, c.code)
		}
	}
	if s.Calls("authorize") == 0 {
		t.Error("authorize calls not counted")
	}
}
