package mailmsg

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReplySubject(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Hello":        "Re: Hello",
		"Re: Hello":    "Re: Hello",
		"RE: Hello":    "RE: Hello",
		"re:Hello":     "re:Hello",
		"  Hello  ":    "Re: Hello",
		"Fwd: Hello":   "Re: Fwd: Hello",
		"":             "Re:",
		"Reunion":      "Re: Reunion",
		"Réunion café": "Re: Réunion café",
	} {
		if got := ReplySubject(in); got != want {
			t.Errorf("ReplySubject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReplyReferences(t *testing.T) {
	t.Parallel()
	tests := []struct{ refs, irt, id, want string }{
		{"", "", "<p@x>", "<p@x>"},
		{"<a@x> <b@x>", "<b@x>", "<p@x>", "<a@x> <b@x> <p@x>"},
		{"", "<b@x>", "<p@x>", "<b@x> <p@x>"},                      // no References: use In-Reply-To
		{"  <a@x>\r\n\t<b@x>  ", "", "<p@x>", "<a@x> <b@x> <p@x>"}, // whitespace normalised
		{"<a@x> (comment) junk", "", "<p@x>", "<a@x> <p@x>"},       // junk dropped
		{"<a@x> <p@x> <b@x>", "", "<p@x>", "<a@x> <b@x> <p@x>"},    // parent id once, last
		{"<a@x> <a@x>", "", "<p@x>", "<a@x> <p@x>"},                // duplicates once
		{"<a@x>", "", "", "<a@x>"},                                 // parent without id
		{"", "", "p@x", "<p@x>"},                                   // brackets added
		{"<a@x>", "<b@x> <c@x>", "<p@x>", "<a@x> <p@x>"},           // References wins
	}
	for _, tt := range tests {
		if got := ReplyReferences(tt.refs, tt.irt, tt.id); got != tt.want {
			t.Errorf("ReplyReferences(%q, %q, %q) = %q, want %q", tt.refs, tt.irt, tt.id, got, tt.want)
		}
	}
}

func TestHTMLToText(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"paragraphs", "<p>Hello</p><p>World</p>", "Hello\n\nWorld"},
		{"script and style dropped", "<style>p{color:red}</style><script>alert(1)</script><p>Hi</p>", "Hi"},
		{"head title dropped", "<html><head><title>T</title><meta charset=utf-8></head><body>Body</body></html>", "Body"},
		{"unclosed head", "<head><title>T</title><body>Body", "Body"},
		{"br", "a<br>b<br/><br>c", "a\nb\n\nc"},
		{"whitespace collapsed", "  a \n\n  b\t c  ", "a b c"},
		{"entities", "Tom &amp; Jerry &lt;3 &eacute; &#x263A; &nbsp;x", "Tom & Jerry <3 é ☺ x"},
		{"link", `See <a href="https://x.com/a?b=1&amp;c=2">the docs</a>.`, "See the docs (https://x.com/a?b=1&c=2)."},
		{"link same as text", `<a href="https://x.com">https://x.com</a>`, "https://x.com"},
		{"mailto", `<a href="mailto:a@x.com">a@x.com</a>`, "a@x.com"},
		{"javascript link", `<a href="javascript:evil()">click</a>`, "click"},
		{"empty link text", `<a href="https://x.com"></a>`, "https://x.com"},
		{"list", "<ul><li>one</li><li>two</li></ul>", "- one\n- two"},
		{"ordered list", "<ol><li>one<li>two</ol>", "1. one\n2. two"},
		{"table", "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>", "a b\nc d"},
		{"pre kept", "<pre>  x\n    y</pre>", "  x\n    y"},
		{"blank runs collapsed", "<div>a</div><br><br><br><br><div>b</div>", "a\n\nb"},
		{"headings", "<h1>Title</h1>text", "Title\n\ntext"},
		{"comment", "a<!-- hidden -->b", "ab"},
		{"img alt", `<img src="x.png" alt="Logo"> text`, "Logo text"},
		{"broken", "<p>a<div><b>b</p>c<", "a\nb\n\nc<"},
		{"plain text", "just text", "just text"},
	}
	for _, tt := range tests {
		if got := HTMLToText(tt.in); got != tt.want {
			t.Errorf("%s: HTMLToText(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain\ttext\nline", "plain\ttext\nline"},
		{"crlf\r\nline\rcr", "crlf\nline\ncr"},
		{"bell\x07 esc\x1b[31m del\x7f", "bell esc[31m del"},
		{"c1\u0085nel \u009b", "c1\nnel "},
		{"zero\u200bwidth\u200d\ufeff", "zerowidth"},
		{"bidi \u202eevil\u202c \u2066iso\u2069", "bidi evil iso"},
		{"tags \U000E0041\U000E0042 hidden", "tags  hidden"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"emoji 🎉 and accents é", "emoji 🎉 and accents é"},
		{"line\u2028sep", "line\nsep"},
	}
	for _, tt := range tests {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{
		"<p>Hello <b>world</b></p>", "<a href='x'>y</a>", "<ol start=5><li>a</ol>", "<pre>\n x</pre>",
		"<script>", "<table><td>a<td>b", "&#0;&#x110000;", "<a href=u><a href=v>w</a>", "<template><p>x",
		"<ol start=999999999999999999999><li>x", "<ul><ul><ul><li>deep",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := HTMLToText(s)
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("blank run left in %q", out)
		}
		for _, in := range []string{out, s} {
			clean := Sanitize(in)
			if !utf8.ValidString(clean) {
				t.Fatalf("Sanitize(%q) = %q: invalid UTF-8", in, clean)
			}
			for _, r := range clean {
				if r != '\n' && r != '\t' && isInvisible(r) || r == '\r' {
					t.Fatalf("Sanitize(%q) left %U", in, r)
				}
			}
			if again := Sanitize(clean); again != clean {
				t.Fatalf("Sanitize not idempotent on %q", in)
			}
		}
	})
}
