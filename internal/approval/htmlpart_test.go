package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// TestHTMLPart: the page gets the exact HTML part a request binds: kept
// under its hash for agent-written HTML (and refused when the kept copy
// does not hash to its name), re-rendered for Markdown (and from the
// corrected body once the approver corrects it).
func TestHTMLPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{})
	parts, err := mailmsg.RenderBody(mailmsg.FormatHTML, `<p>Hello <a href="https://example.com/x">there</a></p>`)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Kind: KindSend, To: "ann@example.org", Subject: "HTML", Body: parts.Text,
		HTMLSHA256: htmlSHA256(parts.HTML), HTMLFrom: mailmsg.FormatHTML, HTML: parts.HTML}
	p, err := v.Request(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := v.Resolve(p.Name)
	if err != nil {
		t.Fatal(err)
	}
	got, src, err := v.HTMLPart(it)
	if err != nil || got != parts.HTML || src != HTMLKept {
		t.Fatalf("HTMLPart = %q, %q, %v", got, src, err)
	}
	kept := filepath.Join(v.Root(), DirLogs, DirHTML, req.HTMLSHA256+".html")
	if err := os.WriteFile(kept, []byte(parts.HTML+"<p>more</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.HTMLPart(it); !errors.Is(err, ErrNoHTML) {
		t.Fatalf("a kept copy changed since: %v, want ErrNoHTML", err)
	}

	md, err := mailmsg.RenderBody(mailmsg.FormatMarkdown, "Hi **Ann**\n")
	if err != nil {
		t.Fatal(err)
	}
	mreq := Request{Kind: KindSend, To: "ann@example.org", Subject: "MD", Body: "Hi **Ann**\n", HTMLSHA256: htmlSHA256(md.HTML), HTMLFrom: mailmsg.FormatMarkdown}
	n := pending(t, v, mreq)
	it, _ = v.Resolve(n)
	if got, src, err := v.HTMLPart(it); err != nil || got != md.HTML || src != HTMLRendered {
		t.Fatalf("markdown: %q, %q, %v", got, src, err)
	}
	it.Body = "Hi **Bob**\n"
	if got, src, err := v.HTMLPart(it); err != nil || got == md.HTML || src != HTMLCorrected {
		t.Fatalf("corrected markdown: %q, %q, %v", got, src, err)
	}
}
