package gmail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestExpiredAccessTokenIsRefreshedAndPersisted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()

	// The token file holds only a refresh token: the first call refreshes.
	if _, err := e.c.Profile(ctx); err != nil {
		t.Fatal(err)
	}
	tok1 := readToken(t, e.tokFile)
	if tok1.AccessToken == "" || tok1.RefreshToken != e.refresh {
		t.Fatalf("after the first refresh the file holds %+v (refresh token must be kept: the server omits it)", tok1)
	}
	st, err := os.Stat(e.tokFile)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Dir(e.tokFile)); st.Mode().Perm() != 0o700 {
		t.Errorf("token dir mode %v, want 0700", st.Mode().Perm())
	}

	// The server now rejects that access token although its expiry is in
	// the future: the client must force one refresh and retry.
	e.srv.ExpireAccessTokens()
	before := e.srv.TokenRequests()
	if _, err := e.c.Profile(ctx); err != nil {
		t.Fatalf("Profile after the access token expired: %v", err)
	}
	if got := e.srv.TokenRequests() - before; got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
	tok2 := readToken(t, e.tokFile)
	if tok2.AccessToken == tok1.AccessToken || tok2.RefreshToken != e.refresh {
		t.Errorf("refreshed token not persisted correctly: %+v", tok2)
	}
	e.wantCalls(t, "getProfile", 3, "ok, 401, ok")

	// A new client (a restart) uses the persisted access token as is.
	before = e.srv.TokenRequests()
	if _, err := e.newClient(t).Profile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.srv.TokenRequests() - before; got != 0 {
		t.Errorf("restart refreshed again (%d token requests)", got)
	}
}

// revokedEnv is an env whose client was signed in (one call made), then
// lost its grant: refresh token revoked, access tokens expired.
func revokedEnv(t *testing.T) *env {
	e := newEnv(t, nil)
	if _, err := e.c.Profile(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.srv.RevokeRefreshToken(e.refresh)
	e.srv.ExpireAccessTokens()
	return e
}

func TestRevokedGrantIsAReauthError(t *testing.T) {
	t.Parallel()
	e := revokedEnv(t)
	ctx := context.Background()

	_, err := e.c.Search(ctx, "anything", 5)
	var re *ReauthError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want *ReauthError", err)
	}
	var rerr *oauth2.RetrieveError
	if !errors.As(err, &rerr) || rerr.ErrorCode != "invalid_grant" {
		t.Errorf("the invalid_grant cause is not reachable from %v", err)
	}
	for _, want := range []string{"invalid_grant", "`mailgate auth`", "7 days"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err text %q lacks %q", err, want)
		}
	}
	e.wantCalls(t, "messages.list", 1, "401, then the refresh fails; no more")

	// Same on a fresh start with a revoked grant, and for Send.
	_, err = e.newClient(t).Send(ctx, buildRaw(t, "bob@example.org", "s", "b"), "")
	var se *SendError
	if !errors.As(err, &re) || !errors.As(err, &se) || se.MayHaveReached {
		t.Errorf("Send with a revoked grant: %v", err)
	}
}

func TestNewReportsBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cred := filepath.Join(dir, "cred.json")
	writeJSON(t, cred, map[string]any{"web": map[string]any{"client_id": "c", "client_secret": "s", "token_uri": "http://127.0.0.1:1/token"}})
	tokPath := filepath.Join(dir, "token.json")
	ctx := context.Background()

	// Missing token file: sign in first.
	_, err := New(ctx, Options{CredentialsFile: cred, TokenFile: tokPath})
	var re *ReauthError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "mailgate auth") || !strings.Contains(err.Error(), tokPath) {
		t.Errorf("missing token: %v", err)
	}
	// Expired token without a refresh token.
	if err := SaveToken(tokPath, &oauth2.Token{AccessToken: "a", Expiry: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	_, err = New(ctx, Options{CredentialsFile: cred, TokenFile: tokPath})
	if !errors.As(err, &re) || !errors.Is(err, ErrNoRefreshToken) {
		t.Errorf("expired token without refresh token: %v", err)
	}
	// Unreadable / wrong credentials file: the error names it.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"type":"service_account"}`), 0o600)
	for _, f := range []string{filepath.Join(dir, "nope.json"), bad} {
		if _, err := New(ctx, Options{CredentialsFile: f, TokenFile: tokPath}); err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("credentials %s: %v", f, err)
		}
	}
	if _, err := New(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "mailgate auth") {
		t.Errorf("nothing configured: %v", err)
	}
	if _, err := New(ctx, Options{Endpoint: "ftp://x", TokenSource: oauth2.StaticTokenSource(&oauth2.Token{})}); err == nil {
		t.Error("accepted an ftp endpoint")
	}
}

func TestLoadOAuthConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	writeJSON(t, p, map[string]any{"installed": map[string]any{
		"client_id": "id", "client_secret": "sec", "token_uri": "http://127.0.0.1:9/token",
		"auth_uri": "http://127.0.0.1:9/auth", "redirect_uris": []string{"http://localhost"}}})
	cfg, err := LoadOAuthConfig(p, ScopeReadonly)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientID != "id" || cfg.ClientSecret != "sec" || cfg.Endpoint.TokenURL != "http://127.0.0.1:9/token" ||
		cfg.Endpoint.AuthStyle != oauth2.AuthStyleInParams || len(cfg.Scopes) != 1 {
		t.Errorf("cfg = %+v", cfg)
	}
	writeJSON(t, p, map[string]any{"installed": map[string]any{"client_id": "id"}})
	if cfg, _ := LoadOAuthConfig(p); cfg.Endpoint.TokenURL != defaultTokenURL {
		t.Errorf("default token URL = %q", cfg.Endpoint.TokenURL)
	}
}

func TestSaveTokenIsAtomicAndPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "dir")
	p := filepath.Join(dir, "token.json")
	exp := time.Now().Add(time.Hour).Round(time.Second)
	for i, at := range []string{"first", "second"} {
		if err := SaveToken(p, &oauth2.Token{AccessToken: at, RefreshToken: "r", Expiry: exp, ExpiresIn: 3599}); err != nil {
			t.Fatal(err)
		}
		got := readToken(t, p)
		if got.AccessToken != at || got.RefreshToken != "r" || !got.Expiry.Equal(exp) || got.ExpiresIn != 0 {
			t.Errorf("round %d: %+v", i, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left temp files behind: %v", entries)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode().Perm())
	}
}

// TestNewSignInIsUsedWithoutRestart: after the grant is revoked, a token
// that `mailgate auth` saves to the file is picked up by the running client
// on its next call; no restart.
func TestNewSignInIsUsedWithoutRestart(t *testing.T) {
	t.Parallel()
	e := revokedEnv(t)
	ctx := context.Background()
	var re *ReauthError
	if _, err := e.c.Search(ctx, "anything", 5); !errors.As(err, &re) {
		t.Fatalf("Search with the grant revoked: %v, want *ReauthError", err)
	}

	// What `mailgate auth` leaves behind: a new grant in the same file.
	fresh := e.srv.IssueRefreshToken(e.clientID, ScopeReadonly, ScopeCompose)
	if err := SaveToken(e.tokFile, &oauth2.Token{RefreshToken: fresh, Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Search(ctx, "anything", 5); err != nil {
		t.Fatalf("Search after a new sign-in: %v", err)
	}
	if tok := readToken(t, e.tokFile); tok.RefreshToken != fresh || tok.AccessToken == "" {
		t.Errorf("token file after the call holds %+v, want the new grant and its access token", tok)
	}
	if !strings.Contains(e.logs.String(), "saved since this server started") {
		t.Errorf("the switch to the new token is not logged: %s", e.logs.String())
	}
}
