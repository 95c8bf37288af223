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
	v, s, _, c := page(t)
	doc := `<p>Hi</p><img src="https://tracker.example/p.png">`
	sum := sha256.Sum256([]byte(doc))
	p, err := v.Request(context.Background(), approval.Request{Kind: approval.KindSend, To: "ann@example.org", Subject: "News",
		Body: "Hi", HTMLSHA256: hex.EncodeToString(sum[:]), HTMLFrom: mailmsg.FormatHTML, HTML: doc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	for _, want := range []string{`sandbox=""`, `srcdoc="`, "default-src &#39;none&#39;", "1 remote resource(s) blocked", "https://tracker.example/p.png", `id="approve"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
}
