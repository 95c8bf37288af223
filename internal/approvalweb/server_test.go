package approvalweb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// page starts a page on a fresh vault and returns it, its URL and a
// client that has exchanged the secret.
func page(t *testing.T) (*approval.Vault, *Server, string, *http.Client) {
	t.Helper()
	v, err := approval.Open(filepath.Join(t.TempDir(), "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	ln, u, err := s.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("exchanging the secret: %d", resp.StatusCode)
	}
	return v, s, u, c
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPageShowsHTMLRequest: the request page carries the HTML in a
// sandboxed srcdoc frame under a CSP that loads nothing, lists the remote
// image, and the page's own CSP allows no inline script.
func TestPageShowsHTMLRequest(t *testing.T) {
	t.Parallel()
	v, s, _, c := page(t)
	doc := `<p>Hi</p><img src="https://tracker.example/p.png">`
	sum := sha256.Sum256([]byte(doc))
	p, err := v.Request(context.Background(), approval.Request{Kind: approval.KindSend, To: "ann@example.org", Subject: "News", From: "news@me.example",
		Body: "Hi", HTMLSHA256: hex.EncodeToString(sum[:]), HTMLFrom: mailmsg.FormatHTML, HTML: doc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, want := range []string{`sandbox=""`, `srcdoc="`, "default-src &#39;none&#39;", "1 remote resource(s) blocked", "https://tracker.example/p.png", `id="approve"`, "news@me.example (a send-as address"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
}

// TestPageGuards: the secret works once; without the session, from
// another Origin, to another Host or without the form token nothing
// changes; with all of them the request is approved, and a second
// decision on it is told someone decided first.
func TestPageGuards(t *testing.T) {
	v, s, u, c := page(t)
	p, err := v.Request(context.Background(), approval.Request{Kind: approval.KindSend, To: "ann@example.org", Subject: "Hi", Body: "Hello.\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, &http.Client{}, u); code != http.StatusForbidden {
		t.Fatalf("the used secret again: %d", code)
	}
	if code, body := get(t, &http.Client{}, s.origin+"/"); code != http.StatusForbidden || strings.Contains(body, "Hi") {
		t.Fatalf("no session: %d %s", code, body)
	}
	_, body := get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	i := strings.Index(body, `name="csrf" value="`)
	if i < 0 {
		t.Fatalf("no form token:\n%s", body)
	}
	csrf := body[i+len(`name="csrf" value="`):]
	csrf = csrf[:strings.IndexByte(csrf, '"')]
	post := func(client *http.Client, origin, host string, form url.Values) int {
		req, _ := http.NewRequest("POST", s.origin+"/approve", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	form := url.Values{"csrf": {csrf}, "folder": {approval.DirPending}, "name": {p.Name}}
	for _, tc := range []struct {
		name         string
		client       *http.Client
		origin, host string
		form         url.Values
		want         int
	}{
		{"no session", &http.Client{}, s.origin, "", form, http.StatusForbidden},
		{"foreign origin", c, "http://evil.example", "", form, http.StatusForbidden},
		{"null origin", c, "null", "", form, http.StatusForbidden},
		{"wrong host", c, s.origin, "localhost" + s.addr[strings.LastIndexByte(s.addr, ':'):], form, http.StatusMisdirectedRequest},
		{"no token", c, s.origin, "", url.Values{"folder": {approval.DirPending}, "name": {p.Name}}, http.StatusForbidden},
	} {
		if got := post(tc.client, tc.origin, tc.host, tc.form); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if _, err := v.Resolve(p.Name, approval.DirPending); err != nil {
		t.Fatalf("a refused post moved the request: %v", err)
	}
	if got := post(c, s.origin, "", form); got != http.StatusOK {
		t.Fatalf("approve: %d", got)
	}
	if _, err := v.Resolve(p.Name, approval.DirApproved); err != nil {
		t.Fatalf("not approved: %v", err)
	}
	if got := post(c, s.origin, "", form); got != http.StatusConflict {
		t.Fatalf("a second decision: %d, want 409", got)
	}
}
