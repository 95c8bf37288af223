// Package mailmsg builds and checks the RFC 5322 messages mailgate hands to
// Gmail, and turns untrusted mail text into something safe to show an agent.
//
// Why a package of its own: every value that reaches a header comes from an
// LLM agent or from a stranger's email, so header injection, a second
// recipient smuggled into "to", broken encodings and invisible control
// characters are the risks to design against. Keeping the rules in one leaf
// package (stdlib, golang.org/x/net/html, and goldmark and bluemonday for
// HTML bodies) lets them be fuzzed in isolation and keeps the Gmail adapter
// free of string handling.
package mailmsg

import (
	"net/mail"
	"strings"
	"unicode/utf8"
)

// maxAddrSpec is the RFC 5321 limit on a forward path.
const maxAddrSpec = 254

// InvalidAddressError reports a recipient or sender that is not exactly one
// well-formed address. Its text is the contract's validation message, which
// the tool layer shows verbatim after "Error: ".
type InvalidAddressError struct {
	Input  string // the string as given
	Reason string // why it was refused, for logs; not part of Error()
	// Detail, when set, follows the contract's text in Error(): said where
	// the address could mislead a person (a quoted local part hiding the
	// domain it goes to).
	Detail string
}

func (e *InvalidAddressError) Error() string {
	if e.Detail != "" {
		return "Invalid email address format: " + e.Input + " (" + e.Detail + ")"
	}
	return "Invalid email address format: " + e.Input
}

// ParseAddress checks that s is exactly one address and returns it.
//
// It refuses CR, LF and NUL anywhere, invalid UTF-8, lists ("a@x, b@y"),
// groups ("team: a@x;"), comments ("a@x (Bob)"), encoded display names
// ("=?utf-8?q?...?= <a@x>"), display names holding '@', quotes or
// backslashes ("boss@x <evil@y>"), domain literals, domains without a dot,
// quoted local parts and an '@' inside a local part
// ("\"ceo@mycompany.com\"@evil.test", which a person reads as an address at
// mycompany.com but goes to evil.test), and anything that does not survive being rendered by Build and parsed
// back: what is accepted here is exactly what will be delivered to, and what
// a human reads in a request file is what is addressed. It is mailgate's one
// address parser: the approval vault uses it too.
func ParseAddress(s string) (*mail.Address, error) {
	bad := func(reason string) (*mail.Address, error) {
		return nil, &InvalidAddressError{Input: s, Reason: reason}
	}
	if s == "" || strings.TrimSpace(s) == "" {
		return bad("empty")
	}
	if len(s) > MaxAddressBytes {
		return bad("too long")
	}
	if strings.ContainsAny(s, "\r\n\x00") {
		return bad("contains a line break or NUL")
	}
	if !utf8.ValidString(s) {
		return bad("invalid UTF-8")
	}
	// net/mail's ParseAddress happily accepts a group holding one address
	// ("x: a@b;"); look for group or list punctuation outside quoted
	// strings, comments and angle brackets first.
	if reason := topLevelSyntax(s); reason != "" {
		return bad(reason)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return bad(err.Error())
	}
	if a.Name != "" {
		if strings.Contains(s[:strings.LastIndexByte(s, '<')+1], "=?") {
			return bad("encoded display names are not accepted")
		}
		if strings.ContainsAny(a.Name, `@"\`) {
			return bad("display name must not contain quotes, backslashes or @")
		}
	}
	if reason := checkAddress(a); reason != "" {
		if reason == reasonLocalPart || quotedLocalPart(s) {
			return nil, localPartError(s, a.Address)
		}
		return bad(reason)
	}
	if quotedLocalPart(s) {
		return nil, localPartError(s, a.Address)
	}
	return a, nil
}

// reasonLocalPart is checkAddress's reason for a local part that is not a
// plain dot-atom.
const reasonLocalPart = "the local part must be a plain dot-atom: no quotes, no @"

// localPartError refuses an address whose local part is quoted or holds an
// '@', naming the domain it would really go to.
func localPartError(input, addr string) error {
	domain := addr[strings.LastIndexByte(addr, '@')+1:]
	return &InvalidAddressError{Input: input, Reason: reasonLocalPart,
		Detail: "a quoted local part or an @ inside one is refused: this address goes to the domain " + Quote(domain) + ", not to the one inside the quotes"}
}

// quotedLocalPart reports a '"' in the addr-spec of s (the part between
// angle brackets when there are any, else all of s): a quoted display name
// is fine, a quoted local part is not.
func quotedLocalPart(s string) bool {
	if i := strings.LastIndexByte(s, '<'); i >= 0 {
		s = s[i:]
	}
	return strings.IndexByte(s, '"') >= 0
}

// dotAtom reports whether local is an RFC 5322 dot-atom: atext runs (ASCII
// letters, digits and !#$%&'*+-/=?^_`{|}~, or any non-ASCII character, as
// SMTPUTF8 allows) separated by single dots.
func dotAtom(local string) bool {
	if local == "" || local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return false
	}
	for _, r := range local {
		switch {
		case r == '.', r >= 0x80:
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r):
		default:
			return false
		}
	}
	return true
}

// checkAddress validates an already parsed address (also used by Build for
// an Outgoing.To built by hand) and returns why it is unusable, or "".
func checkAddress(a *mail.Address) string {
	if a == nil {
		return "missing"
	}
	if !utf8.ValidString(a.Name) || !utf8.ValidString(a.Address) {
		return "invalid UTF-8"
	}
	if hasTextControl(a.Name, false) {
		return "display name contains control characters"
	}
	if hasTextControl(a.Address, false) || strings.ContainsAny(a.Address, " \t") {
		return "address contains control characters or spaces"
	}
	if len(a.Address) > maxAddrSpec {
		return "address longer than 254 octets"
	}
	if len(a.Name) > MaxAddressBytes {
		return "display name too long"
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return "missing local part or domain"
	}
	if !dotAtom(a.Address[:at]) {
		return reasonLocalPart
	}
	domain := a.Address[at+1:]
	if strings.ContainsAny(domain, "[]") {
		return "domain literals are not accepted"
	}
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "domain is not a fully qualified name"
	}
	// Whatever we accept must come back unchanged from the header Build
	// writes; refuse the corner cases where net/mail does not round-trip.
	back, err := mail.ParseAddress(formatAddress(a))
	if err != nil || back.Name != a.Name || back.Address != a.Address {
		return "does not survive re-encoding"
	}
	return ""
}

// topLevelSyntax reports, as the reason to refuse s, a ',', ':' or ';' that
// is not inside a quoted string, angle brackets or a domain literal (the
// marks of an address list or group), or a comment anywhere; "" when there
// is none.
func topLevelSyntax(s string) string {
	inQuote, inAngle, inLiteral := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote:
			if c == '\\' {
				i++
			} else if c == '"' {
				inQuote = false
			}
		case inLiteral:
			if c == '\\' {
				i++
			} else if c == ']' {
				inLiteral = false
			}
		default:
			switch c {
			case '"':
				inQuote = true
			case '(':
				return "comments are not accepted"
			case '[':
				inLiteral = true
			case '<':
				inAngle = true
			case '>':
				inAngle = false
			case ',', ';':
				return "a list or group, not one address"
			case ':':
				// A ':' inside <...> is an obsolete source route; net/mail
				// rejects it anyway. Outside, it opens a group.
				if !inAngle {
					return "a list or group, not one address"
				}
			}
		}
	}
	return ""
}

// formatAddress renders a for a header. Unlike (*mail.Address).String it
// never emits a quoted-string that would have to be folded or that holds
// runs of whitespace (folding collapses them), and it encodes with our own
// bounded encoded-words so long names fold cleanly.
func formatAddress(a *mail.Address) string {
	spec := (&mail.Address{Address: a.Address}).String() // "<local@domain>", local quoted if needed
	if a.Name == "" {
		return spec
	}
	if isPlainPhrase(a.Name) {
		return quotePhrase(a.Name) + " " + spec
	}
	return encodeWords(a.Name) + " " + spec
}

// isPlainPhrase reports whether name can go out as a short quoted-string:
// printable ASCII, single spaces only, no edge spaces, nothing a decoder
// could mistake for an encoded-word.
func isPlainPhrase(name string) bool {
	if len(name) > 60 || !isPlainText(name) {
		return false
	}
	return true
}

// quotePhrase wraps s in double quotes, escaping '"' and '\'.
func quotePhrase(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
