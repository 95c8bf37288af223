package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/testutil"
)

const (
	clientID = "test-client.apps.example"
	secret   = "test-secret"
	readonly = "https://www.googleapis.com/auth/gmail.readonly"
	compose  = "https://www.googleapis.com/auth/gmail.compose"
)

func newGoogle(t *testing.T) (*localgmail.Server, *oauth2.Config) {
	t.Helper()
	gm := localgmail.New(localgmail.Options{RequireAuth: true})
	if _, err := gm.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gm.Close() })
	gm.AddClient(clientID, secret)
	return gm, &oauth2.Config{ClientID: clientID, ClientSecret: secret, Scopes: []string{readonly, compose},
		Endpoint: oauth2.Endpoint{AuthURL: gm.AuthURL(), TokenURL: gm.TokenURL(), AuthStyle: oauth2.AuthStyleInParams}}
}

// browserVisit is what the simulated browser saw on the loopback page.
type browserVisit struct {
	status int
	body   string
	err    error
}

// fakeBrowser follows the authorization URL like a browser would, one hop
// at a time: Google's consent (localgmail answers at once), then the
// redirect to the loopback listener, which tamper may change first.
func fakeBrowser(tamper func(*url.URL)) (func(string) error, <-chan browserVisit) {
	visits := make(chan browserVisit, 1)
	noRedirect := &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(authURL string) error {
		v := browserVisit{}
		defer func() { visits <- v }()
		resp, err := noRedirect.Get(authURL)
		if err != nil {
			v.err = err
			return err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			v.err = fmt.Errorf("consent answered %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
			return v.err
		}
		if tamper != nil {
			tamper(loc)
		}
		resp, err = noRedirect.Get(loc.String())
		if err != nil {
			v.err = err
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		v.status, v.body = resp.StatusCode, string(b)
		return nil
	}, visits
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(gm *localgmail.Server)
		tamper     func(*url.URL)
		wantErr    error
		wantStatus int
		wantPage   string
	}{
		{name: "granted", wantStatus: 200, wantPage: "mailgate is signed in"},
		{name: "denied", setup: func(gm *localgmail.Server) { gm.SetConsent(false) }, wantErr: ErrDenied, wantStatus: 400, wantPage: "denied"},
		{name: "state mismatch", tamper: func(u *url.URL) {
			q := u.Query()
			q.Set("state", "forged")
			u.RawQuery = q.Encode()
		}, wantErr: ErrStateMismatch, wantStatus: 400, wantPage: "state does not match"},
		{name: "unticked scope", setup: func(gm *localgmail.Server) { gm.SetConsentScopes("gmail.readonly") },
			wantErr: &ScopeError{}, wantStatus: 400, wantPage: "gmail.compose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gm, cfg := newGoogle(t)
			if tt.setup != nil {
				tt.setup(gm)
			}
			browser, visits := fakeBrowser(tt.tamper)
			logw := &testutil.Buffer{}
			res, err := Run(context.Background(), Options{Config: cfg, Browser: browser, Log: logw, Timeout: 10 * time.Second})
			v := <-visits
			if v.err != nil || v.status != tt.wantStatus || !strings.Contains(v.body, tt.wantPage) {
				t.Errorf("browser saw %d %q (err %v), want %d with %q", v.status, v.body, v.err, tt.wantStatus, tt.wantPage)
			}
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatal(err)
				}
				if res.Token.RefreshToken == "" || res.Token.AccessToken == "" {
					t.Fatalf("token = %+v", res.Token)
				}
				if strings.Join(res.Granted, " ") != readonly+" "+compose {
					t.Fatalf("granted = %v", res.Granted)
				}
			case *ScopeError:
				var se *ScopeError
				if !errors.As(err, &se) || len(se.Missing) != 1 || se.Missing[0] != compose ||
					!strings.Contains(err.Error(), "gmail.compose") || !strings.Contains(err.Error(), "tick every checkbox") {
					t.Fatalf("err = %v, want a ScopeError naming gmail.compose", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
			printed := logw.String()
			if !strings.Contains(printed, "access_type=offline") || !strings.Contains(printed, "prompt=consent") ||
				!strings.Contains(printed, "code_challenge_method=S256") {
				t.Errorf("printed URL lacks offline/consent/PKCE: %s", printed)
			}
		})
	}
}

func TestRunPortInUse(t *testing.T) {
	t.Parallel()
	_, cfg := newGoogle(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	_, err = Run(context.Background(), Options{Config: cfg, Port: port, Timeout: time.Second})
	var pe *PortInUseError
	if !errors.As(err, &pe) || pe.Port != port || !strings.Contains(err.Error(), fmt.Sprintf("port %d", port)) ||
		!strings.Contains(err.Error(), "--port") {
		t.Fatalf("err = %v, want a PortInUseError naming port %d and --port", err, port)
	}
}

func TestRunChosenPort(t *testing.T) {
	t.Parallel()
	_, cfg := newGoogle(t)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	browser, visits := fakeBrowser(nil)
	res, err := Run(context.Background(), Options{Config: cfg, Port: port, Browser: browser, Timeout: 10 * time.Second})
	<-visits
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("http://127.0.0.1:%d/", port); res.RedirectURL != want {
		t.Fatalf("redirect = %s, want %s", res.RedirectURL, want)
	}
}

// TestRunPaste: the browser is elsewhere; the user pastes the address it
// was sent to (or only the code, or something else first).
func TestRunPaste(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		paste func(loc *url.URL) string
	}{
		{"whole address", func(loc *url.URL) string { return loc.String() + "\n" }},
		{"bare code", func(loc *url.URL) string { return loc.Query().Get("code") + "\n" }},
		{"noise first", func(loc *url.URL) string { return "\nhello there\n  " + loc.String() + "  \n" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, cfg := newGoogle(t)
			pr, pw := io.Pipe()
			defer pw.Close()
			// The "browser" gets the consent redirect but never reaches the
			// listener; the user types its address instead.
			browser := func(authURL string) error {
				c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
				resp, err := c.Get(authURL)
				if err != nil {
					return err
				}
				resp.Body.Close()
				loc, _ := url.Parse(resp.Header.Get("Location"))
				_, err = io.WriteString(pw, tt.paste(loc))
				return err
			}
			res, err := Run(context.Background(), Options{Config: cfg, Browser: browser, Paste: pr, Log: io.Discard, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Token.RefreshToken == "" {
				t.Fatal("no refresh token")
			}
		})
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	_, cfg := newGoogle(t)
	_, err := Run(context.Background(), Options{Config: cfg, Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

// TestRunNoRefreshToken: a token endpoint that ignores access_type=offline.
func TestRunNoRefreshToken(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"a","expires_in":3599,"token_type":"Bearer","scope":%q}`, readonly+" "+compose)
	}))
	defer ts.Close()
	cfg := &oauth2.Config{ClientID: "c", Scopes: []string{readonly, compose},
		Endpoint: oauth2.Endpoint{AuthURL: ts.URL + "/auth", TokenURL: ts.URL + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	browser := func(authURL string) error {
		u, _ := url.Parse(authURL)
		q := u.Query()
		resp, err := http.Get(q.Get("redirect_uri") + "?code=x&state=" + url.QueryEscape(q.Get("state")))
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	_, err := Run(context.Background(), Options{Config: cfg, Browser: browser, Timeout: 10 * time.Second})
	if !errors.Is(err, ErrNoRefreshToken) {
		t.Fatalf("err = %v, want ErrNoRefreshToken", err)
	}
}

func TestCallbackIgnoresOtherRequests(t *testing.T) {
	t.Parallel()
	_, cfg := newGoogle(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan int, 1)
	browser := func(authURL string) error {
		u, _ := url.Parse(authURL)
		resp, err := http.Get(strings.TrimSuffix(u.Query().Get("redirect_uri"), "/") + "/favicon.ico")
		if err != nil {
			return err
		}
		resp.Body.Close()
		got <- resp.StatusCode
		cancel()
		return nil
	}
	_, err := Run(ctx, Options{Config: cfg, Browser: browser, Timeout: 10 * time.Second})
	if status := <-got; status != http.StatusNotFound || !errors.Is(err, context.Canceled) {
		t.Fatalf("favicon answered %d, Run err %v", status, err)
	}
}

func TestParsePasted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		ok, bare  bool
		code, err string
	}{
		{"http://127.0.0.1:5000/?state=s&code=4/0Ab&scope=x", true, false, "4/0Ab", ""},
		{"state=s&code=4%2F0Ab", true, false, "4/0Ab", ""},
		{"4/0Ab-c_d", true, true, "4/0Ab-c_d", ""},
		{"4%2F0Ab", true, true, "4/0Ab", ""},
		{`"http://127.0.0.1:5000/?error=access_denied&state=s"`, true, false, "", "access_denied"},
		{"http://127.0.0.1:5000/", false, false, "", ""},
		{"hello there", false, false, "", ""},
		{"a=b", false, false, "", ""},
	}
	for _, tt := range tests {
		a, ok := parsePasted(tt.in)
		if ok != tt.ok || a.bare != tt.bare || (ok && (a.query.Get("code") != tt.code || a.query.Get("error") != tt.err)) {
			t.Errorf("parsePasted(%q) = %v %v %v, want ok=%v bare=%v code=%q error=%q", tt.in, a.query, a.bare, ok, tt.ok, tt.bare, tt.code, tt.err)
		}
	}
}

func TestSystemBrowserNeedsADisplay(t *testing.T) {
	t.Parallel()
	if SystemBrowser("linux", func(string) string { return "" }) != nil {
		t.Fatal("a browser opener without DISPLAY or WAYLAND_DISPLAY")
	}
}
