// Package warnings finds what a human approving an email could misread:
// addresses that look like other addresses, characters that cannot be seen
// or that reorder what is seen, domains written in punycode, a reply whose
// Reply-To points somewhere else than its sender, and body text that a
// Markdown or Obsidian viewer hides. Each finding is one sentence a person
// can act on.
//
// The rules follow Unicode Technical Standard #39 where it has one: mixed
// scripts are judged with Go's script tables (unicode.Scripts), with the
// standard's "highly restrictive" combinations for Japanese, Chinese and
// Korean allowed; look-alikes are found with the standard's confusable
// skeletons (github.com/mtibben/confusables carries confusables.txt). The
// package only reports: nothing here decides whether an email is sent.
package warnings

import (
	"fmt"
	"maps"
	"net/mail"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/runenames"
)

// Codes of the warnings, stable for tests and for the frontmatter reader.
const (
	CodeInvisible     = "invisible"       // zero-width, bidirectional or other format characters
	CodeMixedScript   = "mixed-script"    // one word in two scripts
	CodeLookalike     = "lookalike"       // looks like another (ASCII) address
	CodePunycode      = "punycode"        // a domain label in xn-- form, or a Unicode domain
	CodeReplyTo       = "reply-to"        // a reply goes to Reply-To, not From
	CodeReplyToDomain = "reply-to-domain" // … in another domain
	CodeNewRecipient  = "new-recipient"   // never written to before
	CodeHidden        = "hidden-text"     // body text a viewer hides
	CodeLoneCR        = "lone-cr"         // a carriage return without a line feed
	CodeRepeat        = "repeat"          // this exact email was handled before
)

// Warning is one finding.
type Warning struct {
	Code string
	Text string // one sentence for the approver
}

func (w Warning) String() string { return w.Text }

// Texts returns the sentences of ws.
func Texts(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}

// Address checks one address as the approver sees it, "addr" or
// "Display Name <addr>"; field names it in the sentences ("To", "Reply-To").
func Address(field, s string) []Warning {
	name, addr := splitAddress(s)
	var ws []Warning
	if name != "" {
		ws = append(ws, invisible(field+" display name "+quote(name), name)...)
		if sc := mixedWords(name); sc != "" {
			ws = append(ws, Warning{CodeMixedScript, fmt.Sprintf("%s display name %s mixes scripts (%s) in one word: it may imitate another name.", field, quote(name), sc)})
		}
	}
	ws = append(ws, invisible(field+" address "+quote(addr), addr)...)
	local, domain := addr, ""
	if at := strings.LastIndexByte(addr, '@'); at >= 0 {
		local, domain = addr[:at], addr[at+1:]
	}
	mixed := []string{}
	if sc := mixedScripts(local); sc != "" {
		mixed = append(mixed, fmt.Sprintf("%q (%s)", local, sc))
	}
	shown := domain
	if domain != "" {
		var pw []Warning
		shown, pw = punycode(field, domain)
		ws = append(ws, pw...)
		for _, label := range strings.Split(shown, ".") {
			if sc := mixedScripts(label); sc != "" {
				mixed = append(mixed, fmt.Sprintf("%q (%s)", label, sc))
			}
		}
	}
	if len(mixed) > 0 {
		ws = append(ws, Warning{CodeMixedScript, fmt.Sprintf("%s address %s mixes scripts in %s: it may imitate another address.", field, quote(addr), strings.Join(mixed, ", "))})
	}
	full := local
	if domain != "" {
		full = local + "@" + shown
	}
	if like, odd := lookalike(full); like != "" {
		ws = append(ws, Warning{CodeLookalike, fmt.Sprintf("%s address %s looks like %s but is not: it contains %s.", field, quote(full), quote(like), strings.Join(odd, ", "))})
	}
	return ws
}

// ReplyTo compares a parent message's From and Reply-To for reply_email,
// which answers Reply-To when it is set.
func ReplyTo(from, replyTo string) []Warning {
	if strings.TrimSpace(replyTo) == "" {
		return nil
	}
	_, f := splitAddress(from)
	_, r := splitAddress(firstOf(replyTo))
	if strings.EqualFold(f, r) || r == "" {
		return nil
	}
	dom := func(a string) string {
		if at := strings.LastIndexByte(a, '@'); at >= 0 {
			return strings.ToLower(a[at+1:])
		}
		return ""
	}
	if df, dr := dom(f), dom(r); df != dr {
		return []Warning{{CodeReplyToDomain, fmt.Sprintf("CAUTION: the message you answer came from %s, but its Reply-To sends your reply to %s, in another domain (%s, not %s). Phishing works this way: check that %s is right.", quote(f), quote(r), quote(dr), quote(df), quote(r))}}
	}
	return []Warning{{CodeReplyTo, fmt.Sprintf("The message you answer came from %s, but its Reply-To sends your reply to %s.", quote(f), quote(r))}}
}

// Text checks a one-line field such as the subject.
func Text(field, s string) []Warning {
	return invisible(field, s)
}

var (
	obsidianComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%%`) })
	htmlComment     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<!--`) })
	htmlTag         = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<![A-Za-z]`)
	})
	// A CommonMark link reference definition (also footnotes, "[^1]: …"):
	// rendered as nothing at all.
	linkRefDef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}\[[^\]]+\]:`) })
)

// Body checks the email body for text a Markdown or Obsidian viewer would
// not show as it is sent. Each finding names its lines.
func Body(s string) []Warning {
	var ws []Warning
	lines := map[string][]int{}
	order := []string{}
	add := func(what string, line int) {
		if _, ok := lines[what]; !ok {
			order = append(order, what)
		}
		if l := lines[what]; len(l) == 0 || l[len(l)-1] != line {
			lines[what] = append(l, line)
		}
	}
	loneCR := []int{}
	all := strings.Split(s, "\n")
	for i, l := range all {
		n := i + 1
		if strings.Contains(strings.TrimSuffix(l, "\r"), "\r") || i == len(all)-1 && strings.HasSuffix(l, "\r") {
			loneCR = append(loneCR, n)
		}
		if obsidianComment().MatchString(l) {
			add("an Obsidian comment (%%…%%), hidden in Obsidian's reading view", n)
		}
		if htmlComment().MatchString(l) {
			add("an HTML comment (<!-- … -->), hidden by Markdown viewers", n)
		}
		if htmlTag().MatchString(l) {
			add("HTML tags, which a Markdown viewer renders or hides instead of showing", n)
		}
		if linkRefDef().MatchString(l) {
			add("a Markdown link reference definition ([label]: …), which a viewer does not show", n)
		}
	}
	for _, what := range order {
		ws = append(ws, Warning{CodeHidden, fmt.Sprintf("The body contains %s on %s: read it in source mode or with `mailgate approvals show`.", what, lineList(lines[what]))})
	}
	if len(loneCR) > 0 {
		ws = append(ws, Warning{CodeLoneCR, fmt.Sprintf("The body contains a carriage return without a line feed on %s: a viewer may draw the text after it over the text before it; it is sent as a line break.", lineList(loneCR))})
	}
	return append(ws, invisible("The body", s)...)
}

// Escape returns s with every invisible, bidirectional or control
// character (tab and line feed excepted) written as ⟨U+XXXX NAME⟩ and a
// carriage return not followed by a line feed as ⟨CR⟩, so a terminal shows
// what is there.
func Escape(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && (hidden(r) || r == '\r') }) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteString("⟨invalid UTF-8⟩")
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteRune(r) // CRLF is an ordinary line end
		case r == '\r':
			b.WriteString("⟨CR⟩")
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case hidden(r):
			b.WriteString("⟨" + runeName(r) + "⟩")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports characters that show as nothing, or change how the text
// around them is displayed: controls, format characters (zero-width,
// bidirectional marks, overrides and isolates, the BOM, soft hyphen, tags),
// default-ignorable code points, variation selectors, and the "filler"
// letters that render blank.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return false
	case r < utf8.RuneSelf:
		// ASCII: of the classes below only the controls have members here
		// (TestHiddenASCII). Bodies are mostly ASCII, and the table
		// lookups below took ~30 ms per scan of a body at the size limit
		// (Escape: 30 -> 4 ms), a send scanning it several times.
		return r < 0x20 || r == 0x7f
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Bidi_Control, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), unicode.Is(unicode.Variation_Selector, r),
		unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case r == 0x3164 || r == 0xffa0 || r == 0x115f || r == 0x1160 || r == 0x2800: // Hangul fillers, braille blank
		return true
	case unicode.Is(unicode.Zs, r): // spaces other than U+0020 look like one
		return true
	}
	return false
}

func invisible(field, s string) []Warning {
	seen := map[rune]bool{}
	var names []string
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || !hidden(r) || seen[r] {
			continue
		}
		seen[r] = true
		names = append(names, runeName(r))
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return []Warning{{CodeInvisible, fmt.Sprintf("%s contains invisible or direction-changing characters (%s): what you see is not what is sent.", field, strings.Join(names, ", "))}}
}

func runeName(r rune) string {
	name := runenames.Name(r)
	if name == "" || strings.HasPrefix(name, "<") {
		return fmt.Sprintf("U+%04X", r)
	}
	return fmt.Sprintf("U+%04X %s", r, name)
}

// punycode decodes xn-- labels and reports them, and reports a Unicode
// domain with the ASCII form it is sent as. It returns the domain as shown
// (decoded).
func punycode(field, domain string) (string, []Warning) {
	var ws []Warning
	shown := domain
	if hasACE(domain) {
		if u, err := idna.Punycode.ToUnicode(domain); err == nil && u != domain {
			shown = u
			ws = append(ws, Warning{CodePunycode, fmt.Sprintf("%s domain %s is punycode: it reads %s (the checks below apply to that).", field, quote(domain), quote(u))})
		} else {
			ws = append(ws, Warning{CodePunycode, fmt.Sprintf("%s domain %s has a punycode (xn--) label that does not decode: it cannot be a real name.", field, quote(domain))})
		}
	} else if !isASCII(domain) {
		if a, err := idna.Punycode.ToASCII(domain); err == nil {
			ws = append(ws, Warning{CodePunycode, fmt.Sprintf("%s domain %s is not plain ASCII: on the wire it is %s.", field, quote(domain), quote(a))})
		}
	}
	return shown, ws
}

func hasACE(domain string) bool {
	for _, l := range strings.Split(domain, ".") {
		if len(l) >= 4 && strings.EqualFold(l[:4], "xn--") {
			return true
		}
	}
	return false
}

// lookalike maps every non-ASCII letter of s to its confusable skeleton
// when that is ASCII; when the result differs from s and is all ASCII it
// returns it with the letters that differ.
func lookalike(s string) (string, []string) {
	if isASCII(s) {
		return "", nil
	}
	var b strings.Builder
	var odd []string
	seen := map[rune]bool{}
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		sk := confusables.Skeleton(string(r))
		if sk == "" || !isASCII(sk) || hidden(r) {
			if hidden(r) {
				continue // reported as invisible; dropped from the look-alike
			}
			return "", nil // a genuinely non-Latin letter: no ASCII twin
		}
		if sk == "rn" && r != 'm' {
			sk = "m"
		}
		b.WriteString(sk)
		if !seen[r] {
			seen[r] = true
			odd = append(odd, fmt.Sprintf("%q (%s)", string(r), runeName(r)))
		}
	}
	like := b.String()
	if like == s || len(odd) == 0 {
		return "", nil
	}
	return like, odd
}

// mixedWords checks each space-separated word of a display name.
func mixedWords(s string) string {
	for _, w := range strings.Fields(s) {
		if sc := mixedScripts(w); sc != "" {
			return sc
		}
	}
	return ""
}

// allowedMixes are UTS #39's "highly restrictive" combinations.
var allowedMixes = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScripts returns the scripts of s joined with "+" when s mixes
// scripts in a way UTS #39 calls suspicious, else "".
func mixedScripts(s string) string {
	set := map[string]bool{}
	for _, r := range s {
		if sc := scriptOf(r); sc != "" {
			set[sc] = true
		}
	}
	if len(set) < 2 {
		return ""
	}
	names := slices.Sorted(maps.Keys(set))
	for _, mix := range allowedMixes {
		ok := true
		for _, n := range names {
			if !slices.Contains(mix, n) {
				ok = false
				break
			}
		}
		if ok {
			return ""
		}
	}
	return strings.Join(names, "+")
}

// scriptNames is unicode.Scripts' keys in a fixed order.
var scriptNames = func() []string {
	var n []string
	for k := range unicode.Scripts {
		if k != "Common" && k != "Inherited" {
			n = append(n, k)
		}
	}
	sort.Strings(n)
	return n
}()

func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return ""
	}
	for _, n := range scriptNames {
		if unicode.Is(unicode.Scripts[n], r) {
			return n
		}
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// splitAddress returns the display name and the address of "Name <addr>",
// or "" and s for a bare address. It never fails: what does not parse is
// checked as written.
func splitAddress(s string) (string, string) {
	s = strings.TrimSpace(s)
	if a, err := mail.ParseAddress(s); err == nil {
		return a.Name, a.Address
	}
	if strings.HasSuffix(s, ">") {
		if i := strings.LastIndexByte(s, '<'); i >= 0 {
			return strings.Trim(strings.TrimSpace(s[:i]), `"`), s[i+1 : len(s)-1]
		}
	}
	return "", s
}

func firstOf(header string) string {
	if list, err := mail.ParseAddressList(header); err == nil && len(list) > 0 {
		return list[0].String()
	}
	return header
}

// quote shows s with its hidden characters escaped, in quotes.
func quote(s string) string {
	return "\"" + strings.NewReplacer("\n", "⟨LF⟩", "\r", "⟨CR⟩").Replace(Escape(s)) + "\""
}

func lineList(ls []int) string {
	parts := make([]string, 0, len(ls))
	for i, l := range ls {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ls)-5))
			break
		}
		parts = append(parts, fmt.Sprint(l))
	}
	word := "line "
	if len(ls) > 1 {
		word = "lines "
	}
	return word + strings.Join(parts, ", ")
}

// DisplayName checks only the display name of a header such as Reply-To
// ("Name <addr>"): what a human reads next to an address that is checked
// on its own.
func DisplayName(field, header string) []Warning {
	name, _ := splitAddress(firstOf(header))
	if name == "" {
		return nil
	}
	ws := invisible(field+" display name "+quote(name), name)
	if sc := mixedWords(name); sc != "" {
		ws = append(ws, Warning{CodeMixedScript, fmt.Sprintf("%s display name %s mixes scripts (%s) in one word: it may imitate another name.", field, quote(name), sc)})
	}
	return ws
}
