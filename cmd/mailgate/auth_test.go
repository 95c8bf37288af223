package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// simBrowser stands in for the user's browser: it asks the authorization
// endpoint (localgmail answers the consent screen at once, as configured),
// does not follow the redirect, and then, as a browser would, loads the
// redirect target on mailgate's loopback listener, unless deliver says
// otherwise (a paste test types the address instead). tamper may change the
// redirect first.
type simBrowser struct {
	tamper  func(t *testing.T, w *world, loc *url.URL)
	w       *world
	deliver func(loc *url.URL) error
	t       *testing.T
	page    chan string // what the loopback page said
}

func (b *simBrowser) open(authURL string) error {
	defer close(b.page)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		return fmt.Errorf("consent answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if b.tamper != nil {
		b.tamper(b.t, b.w, loc)
	}
	if b.deliver != nil {
		return b.deliver(loc)
	}
	resp, err = c.Get(loc.String())
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.page <- fmt.Sprintf("%d %s", resp.StatusCode, body)
	return nil
}

func TestAuthFlow(t *testing.T) {
	parallel(t)
	tests := []struct {
		name    string
		setup   func(t *testing.T, w *world) (args []string, extraEnv []string)
		tamper  func(t *testing.T, w *world, loc *url.URL)
		manual  bool
		wantErr error // nil: success
		errText string
		stderr  string
	}{
		{name: "granted", stderr: "Gmail answers for me@example.com", tamper: tryStolenCode},
		{name: "denied", wantErr: oauthflow.ErrDenied,
			setup: func(t *testing.T, w *world) ([]string, []string) { w.gm.SetConsent(false); return nil, nil }},
		{name: "state mismatch", wantErr: oauthflow.ErrStateMismatch,
			tamper: func(t *testing.T, w *world, loc *url.URL) {
				q := loc.Query()
				q.Set("state", "forged")
				loc.RawQuery = q.Encode()
			}},
		{name: "unticked compose", wantErr: &oauthflow.ScopeError{}, errText: "gmail.compose",
			setup: func(t *testing.T, w *world) ([]string, []string) {
				w.gm.SetConsentScopes("gmail.readonly")
				return nil, nil
			}},
		{name: "mirror asks for insert and labels", stderr: "Granted: gmail.readonly, gmail.insert, gmail.labels",
			setup: func(t *testing.T, w *world) ([]string, []string) {
				return nil, []string{"AGENT_MAIL_MIRROR=gmail", "MAILGATE_TOOLS=agentmail"}
			}},
		// The email tools ask for the scope of each kind of tool they serve;
		// the mirror's scopes are then covered by gmail.modify.
		{name: "email tools ask per kind of tool", stderr: "mailgate asks Google for: gmail.readonly, gmail.compose, gmail.send, gmail.modify, gmail.settings.basic\n",
			setup: func(t *testing.T, w *world) ([]string, []string) { return nil, []string{"AGENT_MAIL_MIRROR=gmail"} }},
		{name: "unticked modify", wantErr: &oauthflow.ScopeError{}, errText: "gmail.modify",
			setup: func(t *testing.T, w *world) ([]string, []string) {
				w.gm.SetConsentScopes("gmail.readonly", "gmail.compose", "gmail.send")
				return nil, nil
			}},
		{name: "manual paste", manual: true, stderr: "paste it here"},
		{name: "chosen port", setup: func(t *testing.T, w *world) ([]string, []string) {
			return []string{"--port", strconv.Itoa(freePort(t))}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, true)
			// A fresh token location, to see SaveToken create its folder 0700.
			tokenFile := filepath.Join(w.home, "private", "token.json")
			args, extra := []string{"--timeout", "20s"}, []string{"GMAIL_TOKEN_FILE=" + tokenFile}
			if tt.setup != nil {
				a, e := tt.setup(t, w)
				args, extra = append(args, a...), append(extra, e...)
			}
			b := &simBrowser{tamper: tt.tamper, t: t, w: w, page: make(chan string, 1)}
			var stdin io.Reader
			if tt.manual {
				pr, pw := io.Pipe()
				defer pw.Close()
				stdin = pr
				args = append(args, "--manual")
				b.deliver = func(loc *url.URL) error {
					_, err := io.WriteString(pw, "here it is:\n"+loc.String()+"\n")
					return err
				}
			}
			r := newSetupRun(append(w.env, extra...), stdin)
			err := runAuth(context.Background(), r.env, args, b.open)
			page := <-b.page
			t.Logf("stderr:\n%s", r.stderr)

			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("auth: %v", err)
				}
				if !tt.manual && !strings.HasPrefix(page, "200 ") {
					t.Errorf("browser page = %q", page)
				}
				checkSavedToken(t, tokenFile, w.gm)
				if !strings.Contains(r.stderr.String(), "7 days") || !strings.Contains(r.stderr.String(), tt.stderr) {
					t.Errorf("stderr lacks the 7-day note or %q", tt.stderr)
				}
				if r.stdout.String() != "" {
					t.Errorf("auth wrote to stdout: %q", r.stdout)
				}
				return
			}
			var se *oauthflow.ScopeError
			if errors.As(tt.wantErr, &se) {
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.errText) || !strings.Contains(err.Error(), "tick every checkbox") {
					t.Fatalf("err = %v, want a scope error naming %s", err, tt.errText)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.HasPrefix(page, "400 ") {
				t.Errorf("browser page = %q, want a 400 explaining the failure", page)
			}
			if _, err := os.Stat(tokenFile); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a token was written after a failed sign-in (%v)", err)
			}
		})
	}
}

// tryStolenCode plays someone who saw the redirect (another local program,
// a browser extension): without this sign-in's PKCE verifier the code is
// refused, and it stays usable for mailgate.
func tryStolenCode(t *testing.T, w *world, loc *url.URL) {
	for _, tc := range []struct{ verifier, want string }{
		{"", "Missing code verifier"},
		{strings.Repeat("x", 43), "Invalid code verifier"},
	} {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {testClientID},
			"client_secret": {testClientSecret}, "redirect_uri": {"http://" + loc.Host + "/"}}
		if tc.verifier != "" {
			form.Set("code_verifier", tc.verifier)
		}
		resp, err := http.PostForm(w.gm.TokenURL(), form)
		if err != nil {
			t.Error(err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "invalid_grant") || !strings.Contains(string(body), tc.want) {
			t.Errorf("exchange with verifier %q: %d %s", tc.verifier, resp.StatusCode, body)
		}
	}
}

// TestAuthPortInUse: a port taken by someone else is named in the error,
// with what to do; nothing falls back silently.
func TestAuthPortInUse(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	os.Remove(filepath.Join(w.home, "auth", "token.json"))
	r := newSetupRun(w.env, nil)
	err = runAuth(context.Background(), r.env, []string{"--port", strconv.Itoa(port)}, func(string) error {
		t.Error("browser opened although the listener could not start")
		return nil
	})
	var pe *oauthflow.PortInUseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), fmt.Sprintf("port %d", port)) || !strings.Contains(err.Error(), "--port") {
		t.Fatalf("err = %v, want one naming port %d and --port", err, port)
	}
	if _, err := os.Stat(filepath.Join(w.home, "auth", "token.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("token written")
	}
}

// TestAuthNoCredentials: the user is told how to create the OAuth client
// and where to put it, as the built binary says it.
func TestAuthNoCredentials(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	creds := filepath.Join(w.home, "auth", "credentials.json")
	os.Remove(creds)
	cmd := exec.Command(builtBinary(t), "auth", "--no-browser", "--timeout", "1s")
	cmd.Env = w.env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	for _, want := range []string{`"Desktop app"`, "Gmail API", "Test users", creds, "GMAIL_CREDENTIALS_FILE", "docs/SETUP.md"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q", stdout.String())
	}
}

// checkSavedToken: 0600 in a 0700 folder, with a refresh token the server
// honours.
func checkSavedToken(t *testing.T, path string, gm *localgmail.Server) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("token not saved: %v", err)
	}
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("token mode %v in folder %v, want 0600 in 0700", fi.Mode().Perm(), di.Mode().Perm())
	}
	tok, err := gmail.LoadToken(path)
	if err != nil || tok.RefreshToken == "" {
		t.Fatalf("saved token %+v (%v) has no refresh token", tok, err)
	}
	before := gm.TokenRequests()
	resp, err := http.PostForm(gm.TokenURL(), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {testClientID}, "client_secret": {testClientSecret}})
	if err != nil || resp.StatusCode != 200 || gm.TokenRequests() != before+1 {
		t.Fatalf("refreshing with the saved token: %v %v", resp, err)
	}
	resp.Body.Close()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestAuthTightensAuthFolder: a git checkout creates auth/ 0755; signing in
// makes mailgate's own folder 0700, so doctor has nothing to warn about.
func TestAuthTightensAuthFolder(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	dir := filepath.Join(w.home, "auth")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &simBrowser{t: t, w: w, page: make(chan string, 1)}
	r := newSetupRun(w.env, nil)
	if err := runAuth(context.Background(), r.env, nil, b.open); err != nil {
		t.Fatal(err)
	}
	<-b.page
	checkSavedToken(t, filepath.Join(dir, "token.json"), w.gm)
	d := newSetupRun(w.env, nil, "doctor", "--strict")
	if code := d.run(t); code != 0 {
		t.Fatalf("doctor --strict after auth: exit %d\n%s", code, d.stdout)
	}
}

// TestReauthWhileServing: the grant of a running server is revoked; its
// tools say to run `mailgate auth`; the user does, in a terminal, and the
// same server answers again, without a restart (in-process: connectHere).
func TestReauthWhileServing(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	cs := w.connectHere()
	if text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"}); isErr {
		t.Fatalf("search_email before: %s", text)
	}
	tok, err := gmail.LoadToken(filepath.Join(w.home, "auth", "token.json"))
	if err != nil {
		t.Fatal(err)
	}
	w.gm.RevokeRefreshToken(tok.RefreshToken)
	w.gm.ExpireAccessTokens()
	if text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"}); !isErr || !strings.Contains(text, "mailgate auth") {
		t.Fatalf("search_email with the grant revoked = %q (error %v), want the re-auth advice", text, isErr)
	}

	b := &simBrowser{t: t, w: w, page: make(chan string, 1)}
	r := newSetupRun(w.env, nil)
	if err := runAuth(context.Background(), r.env, []string{"--timeout", "20s"}, b.open); err != nil {
		t.Fatalf("mailgate auth: %v\n%s", err, r.stderr)
	}
	<-b.page
	if text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"}); isErr || !strings.HasPrefix(text, "Found 1 email") {
		t.Fatalf("search_email after mailgate auth, same server = %q (error %v)", text, isErr)
	}
}

// TestAuthCreatesAuthFolder: without credentials, auth tells the user to
// save credentials.json in the home's auth/ folder, and that folder exists
// (0700) when they go to save it there.
func TestAuthCreatesAuthFolder(t *testing.T) {
	parallel(t)
	home := filepath.Join(t.TempDir(), "home")
	r := newSetupRun([]string{"MAILGATE_HOME=" + home, "HOME=" + t.TempDir()}, nil, "auth", "--no-browser")
	if code := r.run(t); code != 1 {
		t.Fatalf("auth without credentials: exit %d\n%s", code, r.stderr)
	}
	dir := filepath.Join(home, "auth")
	if !strings.Contains(r.stderr.String(), filepath.Join(dir, "credentials.json")) {
		t.Fatalf("auth does not say where to save credentials.json:\n%s", r.stderr)
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("auth/ after auth: %v %v, want a folder 0700", fi, err)
	}
}
