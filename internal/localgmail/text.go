package localgmail

import (
	"html"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Text helpers shared by the MIME parser (snippets, search text) and the query
// engine. Search works on tokens: lowercase runs of letters and digits with
// common Latin accents folded, so "Café" and "cafe" are the same word, the way
// Gmail search treats them.

// tokenize splits s into folded lowercase tokens of letters and digits.
func tokenize(s string) []string {
	var toks []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			toks = append(toks, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteString(foldRune(unicode.ToLower(r)))
			continue
		}
		flush()
	}
	flush()
	return toks
}

// foldWord lowercases and folds accents of a whole string (no splitting).
func foldWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(foldRune(unicode.ToLower(r)))
	}
	return b.String()
}

// accentFold maps the common precomposed Latin letters to their base letters.
// A table instead of golang.org/x/text keeps the package dependency-free.
// Built on first use, not at every start.
var accentFold = sync.OnceValue(func() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'ð': "d", 'þ': "th", 'ł': "l", 'đ': "d"}
	groups := map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ď", "e": "èéêëēĕėęě", "g": "ĝğġģ", "h": "ĥħ",
		"i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľŀ", "n": "ñńņňŉ", "o": "òóôõöōŏő",
		"r": "ŕŗř", "s": "śŝşšș", "t": "ţťŧț", "u": "ùúûüũūŭůűų", "w": "ŵ", "y": "ýÿŷ", "z": "źżž",
	}
	for base, letters := range groups {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
})

func foldRune(r rune) string {
	if r < utf8.RuneSelf {
		return string(r)
	}
	if f, ok := accentFold()[r]; ok {
		return f
	}
	return string(r)
}

// tokenField is one searchable field: its token sequence (for phrases) and
// set (for single words), built once when a message is stored.
type tokenField struct {
	seq []string
	set map[string]struct{}
}

func newTokenField(texts ...string) tokenField {
	f := tokenField{set: map[string]struct{}{}}
	for i, t := range texts {
		if i > 0 {
			f.seq = append(f.seq, "") // a break so phrases do not span two texts
		}
		for _, tok := range tokenize(t) {
			f.seq = append(f.seq, tok)
			f.set[tok] = struct{}{}
		}
	}
	return f
}

// has reports whether the token sequence want occurs in f (a phrase when
// len(want) > 1). An empty want matches everything.
func (f tokenField) has(want []string) bool {
	switch len(want) {
	case 0:
		return true
	case 1:
		_, ok := f.set[want[0]]
		return ok
	}
	if _, ok := f.set[want[0]]; !ok {
		return false
	}
outer:
	for i := 0; i+len(want) <= len(f.seq); i++ {
		for j, w := range want {
			if f.seq[i+j] != w {
				continue outer
			}
		}
		return true
	}
	return false
}

// htmlToText is a small, forgiving tag stripper: enough to index and snippet
// HTML-only mail. Script and style contents are dropped.
func htmlToText(s string) string {
	var b strings.Builder
	lower := asciiLower(s) // same byte offsets as s, unlike strings.ToLower
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		tag := lower[i+1 : i+end]
		i += end + 1
		for _, skip := range []string{"script", "style", "head"} {
			if strings.HasPrefix(tag, skip) && (len(tag) == len(skip) || !isTagNameByte(tag[len(skip)])) {
				if k := strings.Index(lower[i:], "</"+skip); k >= 0 {
					i += k
				} else {
					i = len(s)
				}
			}
		}
		b.WriteByte(' ')
	}
	return html.UnescapeString(b.String())
}

// asciiLower lowercases A–Z only, so offsets into the result are offsets
// into s (Unicode lowercasing can change a string's byte length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isTagNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// snippetEscaper reproduces Gmail's HTML-escaped snippets ("it&#39;s").
var snippetEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// makeSnippet collapses whitespace and cuts at about 200 characters.
func makeSnippet(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	const max = 200
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)[:max]
		s = strings.TrimSpace(string(r))
	}
	return snippetEscaper.Replace(s)
}

// win1252 holds the printable characters Windows-1252 puts in 0x80–0x9F,
// where ISO-8859-1 has control codes.
var win1252 = map[byte]rune{
	0x80: '€', 0x82: '‚', 0x83: 'ƒ', 0x84: '„', 0x85: '…', 0x86: '†', 0x87: '‡', 0x88: 'ˆ', 0x89: '‰',
	0x8A: 'Š', 0x8B: '‹', 0x8C: 'Œ', 0x8E: 'Ž', 0x91: '‘', 0x92: '’', 0x93: '“', 0x94: '”', 0x95: '•',
	0x96: '–', 0x97: '—', 0x98: '˜', 0x99: '™', 0x9A: 'š', 0x9B: '›', 0x9C: 'œ', 0x9E: 'ž', 0x9F: 'Ÿ',
}

// toUTF8 converts text in the few charsets common in real mail to UTF-8, for
// indexing only (stored bodies keep their bytes). Unknown charsets are
// treated as UTF-8 with invalid bytes replaced.
func toUTF8(b []byte, charset string) string {
	switch strings.ToLower(strings.Trim(charset, `" `)) {
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "windows-1252", "cp1252", "iso-8859-15":
		var sb strings.Builder
		for _, c := range b {
			if r, ok := win1252[c]; ok {
				sb.WriteRune(r)
			} else {
				sb.WriteRune(rune(c))
			}
		}
		return sb.String()
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
