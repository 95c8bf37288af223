package mailmsg

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Sanitize makes untrusted email text safe to hand to an agent: line ends
// become "\n"; C0 and C1 controls (other than \n and \t), DEL, zero-width
// characters, BiDi embedding/override/isolate marks and Unicode "tag"
// characters are removed; invalid UTF-8 becomes U+FFFD. These are the
// characters used to hide instructions from the human reader of a mail
// ("ASCII smuggling", Trojan Source) or to corrupt a terminal.
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			b.WriteByte('\n') // lone CR, line/paragraph separator, NEL
		case isInvisible(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isInvisible reports the characters Sanitize removes.
func isInvisible(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f: // C0, DEL, C1
		return true
	case r >= 0x200b && r <= 0x200f: // ZWSP, ZWNJ, ZWJ, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x061c, r == 0x180e, r == 0xfeff: // ALM, Mongolian VS, BOM/ZWNBSP
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters (invisible ASCII copies)
		return true
	}
	return false
}

// blockTags end the current line before and after their content.
var blockTags = map[atom.Atom]bool{
	atom.Address: true, atom.Article: true, atom.Aside: true, atom.Center: true,
	atom.Dd: true, atom.Div: true, atom.Dl: true, atom.Dt: true, atom.Fieldset: true,
	atom.Figcaption: true, atom.Figure: true, atom.Footer: true, atom.Form: true,
	atom.Header: true, atom.Li: true, atom.Main: true, atom.Nav: true, atom.Section: true,
	atom.Tr: true, atom.Caption: true, atom.Summary: true, atom.Details: true,
}

// paraTags are separated from their surroundings by a blank line.
var paraTags = map[atom.Atom]bool{
	atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Blockquote: true, atom.Pre: true,
	atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Hr: true,
}

// skipTags have content that is never shown to a reader.
var skipTags = map[atom.Atom]bool{
	// Not <head>: it is often left open, and its only text-bearing
	// children (title, style, script) are listed already.
	atom.Script: true, atom.Style: true, atom.Title: true, atom.Template: true,
}

// htmlText accumulates rendered text.
type htmlText struct {
	b        strings.Builder
	space    bool // a space is pending before the next visible character
	pre      int  // depth of <pre>
	skip     int  // depth inside skipTags
	link     *linkState
	lists    []int // per open list: -1 for <ul>, else the next <ol> number
	lastRune rune
}

type linkState struct {
	href  string
	start int // b.Len() when the link opened
}

// HTMLToText renders an HTML mail body as readable plain text: script,
// style and title content dropped, block elements on their own lines,
// list items bulleted, links as "text (url)", entities decoded, runs of
// blank lines collapsed to one. It never fails: malformed HTML is read the
// way browsers read it, as far as the tokenizer goes.
func HTMLToText(s string) string {
	t := &htmlText{}
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF, or the tokenizer's own limit
		}
		tok := z.Token()
		switch tt {
		case html.TextToken:
			if t.skip == 0 {
				t.text(tok.Data)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			t.start(tok, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			t.end(tok)
		}
	}
	t.closeLink()
	return tidy(t.b.String())
}

func (t *htmlText) start(tok html.Token, selfClosing bool) {
	a := tok.DataAtom
	if skipTags[a] {
		if !selfClosing {
			t.skip++
		}
		return
	}
	if t.skip > 0 {
		return
	}
	switch {
	case a == atom.Br:
		t.write("\n")
		t.space = false
		return
	case a == atom.Hr:
		t.newlines(2)
		t.write("---")
		t.newlines(2)
		return
	case a == atom.Img:
		if alt := strings.TrimSpace(attr(tok, "alt")); alt != "" {
			t.text(alt)
		}
		return
	case a == atom.Td || a == atom.Th:
		t.space = true
		return
	case a == atom.A:
		t.closeLink()
		if href := strings.TrimSpace(attr(tok, "href")); href != "" {
			t.link = &linkState{href: href, start: t.b.Len()}
		}
		return
	case a == atom.Ul || a == atom.Ol:
		n := -1
		if a == atom.Ol {
			n = 1
			if v, err := strconv.Atoi(attr(tok, "start")); err == nil && v >= 0 && v < 1e6 {
				n = v
			}
		}
		t.lists = append(t.lists, n)
	}
	if paraTags[a] {
		t.newlines(2)
	} else if blockTags[a] {
		t.newlines(1)
	}
	if a == atom.Pre {
		t.pre++
	}
	if a == atom.Li {
		// Indent nested lists, but not without bound: hostile HTML can
		// nest thousands deep.
		indent := strings.Repeat("  ", min(max(len(t.lists)-1, 0), 8))
		bullet := "- "
		if n := len(t.lists); n > 0 && t.lists[n-1] >= 0 {
			bullet = strconv.Itoa(t.lists[n-1]) + ". "
			t.lists[n-1]++
		}
		t.write(indent + bullet)
		t.space = false
	}
}

func (t *htmlText) end(tok html.Token) {
	a := tok.DataAtom
	if skipTags[a] {
		if t.skip > 0 {
			t.skip--
		}
		return
	}
	if t.skip > 0 {
		return
	}
	switch a {
	case atom.A:
		t.closeLink()
		return
	case atom.Pre:
		if t.pre > 0 {
			t.pre--
		}
	case atom.Ul, atom.Ol:
		if len(t.lists) > 0 {
			t.lists = t.lists[:len(t.lists)-1]
		}
	case atom.Td, atom.Th:
		t.space = true
	}
	if paraTags[a] {
		t.newlines(2)
	} else if blockTags[a] {
		t.newlines(1)
	}
}

// closeLink appends " (url)" after a link's text unless the text already
// says it (or the link goes nowhere a reader can follow).
func (t *htmlText) closeLink() {
	l := t.link
	t.link = nil
	if l == nil {
		return
	}
	lower := strings.ToLower(l.href)
	if strings.HasPrefix(lower, "#") || strings.HasPrefix(lower, "javascript:") ||
		strings.HasPrefix(lower, "data:") {
		return
	}
	text := strings.TrimSpace(t.b.String()[l.start:])
	target := strings.TrimPrefix(l.href, "mailto:")
	if text == l.href || text == target {
		return
	}
	if text == "" {
		t.text(l.href)
		return
	}
	t.space = true
	t.text("(" + l.href + ")")
}

// text writes character data, collapsing whitespace outside <pre>.
func (t *htmlText) text(s string) {
	if t.pre > 0 {
		t.write(s)
		return
	}
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '\u00a0':
			// &nbsp; counts as a space here: layout tables pad with it.
			t.space = true
			continue
		}
		if t.space && t.lastRune != '\n' && t.lastRune != 0 {
			t.write(" ")
		}
		t.space = false
		t.write(string(r))
	}
}

func (t *htmlText) write(s string) {
	if s == "" {
		return
	}
	t.b.WriteString(s)
	t.lastRune, _ = utf8.DecodeLastRuneInString(s)
}

// newlines ends the current line and makes sure at least n line breaks
// precede what comes next (n=2 leaves a blank line).
func (t *htmlText) newlines(n int) {
	t.space = false
	if t.b.Len() == 0 {
		return
	}
	s := t.b.String()
	have := len(s) - len(strings.TrimRight(s, "\n"))
	for ; have < n; have++ {
		t.write("\n")
	}
}

func attr(tok html.Token, name string) string {
	for _, a := range tok.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// tidy trims trailing blanks on every line, collapses runs of blank lines
// to one and trims blank lines at both ends.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := true // suppress leading blank lines
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}
