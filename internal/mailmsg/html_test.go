package mailmsg

import (
	"bytes"
	"errors"
	"net/mail"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// checkSafeHTML fails on a script, style, iframe, object, embed or form
// element, an on* attribute, or a javascript:/data: URL in s, as a browser
// would read it.
func checkSafeHTML(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(strings.ToLower(s), "<script") {
		t.Fatalf("HTML holds <script: %q", s)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.DataAtom {
		case atom.Script, atom.Style, atom.Iframe, atom.Object, atom.Embed, atom.Form, atom.Input, atom.Meta, atom.Link, atom.Base,
			// the email-HTML policy: no media, no direction changes,
			// nothing hidden or struck
			atom.Img, atom.Svg, atom.Picture, atom.Video, atom.Audio, atom.Source,
			atom.Bdo, atom.Bdi, atom.Del, atom.S, atom.Strike, atom.Details:
			t.Fatalf("HTML holds <%s>: %q", tok.Data, s)
		}
		for _, a := range tok.Attr {
			k := strings.ToLower(a.Key)
			v := strings.ToLower(strings.TrimSpace(a.Val))
			if strings.HasPrefix(k, "on") || k == "style" || k == "srcdoc" || k == "dir" || k == "hidden" || k == "class" || k == "id" || k == "src" {
				t.Fatalf("HTML holds attribute %s: %q", a.Key, s)
			}
			if (k == "href" || k == "src") && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:") || strings.HasPrefix(v, "vbscript:")) {
				t.Fatalf("HTML holds %s=%q: %q", a.Key, a.Val, s)
			}
		}
	}
}

func FuzzRenderBody(f *testing.F) {
	for _, s := range []string{
		"# Hi\n\n**bold** [x](https://example.com)",
		"<script>alert(1)</script>",
		"<img src=x onerror=alert(1)>",
		"[x](javascript:alert(1)) ![i](data:text/html,<script>x</script>)",
		`<a href="jav&#x09;ascript:alert(1)">x</a>`,
		"<svg><script>alert(1)</script></svg><math><style>x</style></math>",
		"<scr<script>ipt>alert(1)</script>",
		"| a |\n|---|\n| <b onclick=x>1</b> |",
		"<<script>script>x<</script>/script>",
		"<p style=\"background:url(javascript:x)\">p</p><iframe srcdoc=\"<script>\"></iframe>",
		"```\n<script>\n```",
		"\xff\xfe",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, body string, asHTML bool) {
		format := FormatMarkdown
		if asHTML {
			format = FormatHTML
		}
		p, err := RenderBody(format, body)
		if err != nil {
			if utf8.ValidString(body) && !errors.Is(err, ErrRemoteContent) {
				t.Fatalf("RenderBody(%q): %v", body, err)
			}
			return
		}
		checkSafeHTML(t, p.HTML)
		if !utf8.ValidString(p.Text) || !utf8.ValidString(p.HTML) {
			t.Fatalf("invalid UTF-8 out of %q", body)
		}
		if asHTML && p.HTML != "" && SanitizeHTML(p.HTML) != p.HTML {
			// Not required for safety, but a second pass changing the
			// output would mean the first left something to remove.
			checkSafeHTML(t, SanitizeHTML(p.HTML))
		}
		// Whatever renders also builds and reads back part for part.
		raw, err := Build(Outgoing{To: &mailAddrFuzz, Subject: "s", Body: p.Text, HTML: p.HTML, Boundary: "fuzz"})
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		_, mt, leaves := parseMIME(t, raw)
		if p.HTML == "" {
			return
		}
		if mt != "multipart/alternative" || len(leaves) != 2 ||
			!bytes.Equal(leaves[1].body, []byte(crlf(p.HTML))) || !bytes.Equal(leaves[0].body, []byte(crlf(p.Text))) {
			t.Fatalf("parts did not read back: %s %d", mt, len(leaves))
		}
	})
}

var mailAddrFuzz = mail.Address{Address: "a@example.com"}

func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}
