package approval

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// TestRequestFileWithHTMLPartGolden: a request file with an HTML part says
// where the HTML came from, lists every link, flags the misleading one (in
// the links and as a warning), for HTML written by the agent and for
// Markdown.
func TestRequestFileWithHTMLPartGolden(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		format mailmsg.BodyFormat
		body   string
	}{
		{"request_html.golden.md", mailmsg.FormatHTML,
			`<p>IBAN: <bdo dir="rtl">DE89 3704</bdo></p><p>Log in at <a href="https://attacker.example/login">https://bank.example/login</a> or read <a href="https://docs.example/terms">the terms</a>.</p>`},
		{"request_markdown.golden.md", mailmsg.FormatMarkdown, "Hello **Alice**,\n\nthe [report](https://docs.example/r) is ready.\n"},
		{"request_markdown_nolinks.golden.md", mailmsg.FormatMarkdown, "Hello **Alice**.\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parts, err := mailmsg.RenderBody(c.format, c.body)
			if err != nil {
				t.Fatal(err)
			}
			d, err := mailmsg.Digest(mailmsg.Outgoing{Body: parts.Text, HTML: parts.HTML})
			if err != nil {
				t.Fatal(err)
			}
			req := Request{Kind: KindSend, To: "alice@example.com", Subject: "Invoice", Body: parts.Text,
				HTMLSHA256: d.HTMLSHA256, HTMLFrom: c.format, HTMLLinks: mailmsg.HTMLLinks(parts.HTML)}
			if err := req.Validate(); err != nil {
				t.Fatal(err)
			}
			got := renderRequest(req, req.SHA256(), req.SHA256()[:32]+"-00000000", created, created.Add(24*time.Hour), "")
			path := filepath.Join("testdata", c.name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("request file differs from %s (run with -update and check the diff):\n%s", path, got)
			}
			// The file reads back as the request it was written for.
			p, err := parseApproval(got)
			if err != nil || p.HTMLSHA256 != req.HTMLSHA256 || p.HTMLFrom != string(c.format) || len(p.HTMLLinks) != len(req.HTMLLinks) {
				t.Fatalf("read back: %+v, %v", p, err)
			}
		})
	}
}
