package mailmsg

import (
	"regexp"
	"strings"
	"sync"
)

// ReplySubject returns the subject for a reply to a message with subject s:
// "Re: " is added unless s already starts with "re:" in any case, so a long
// thread never grows "Re: Re: Re:". Gmail also needs the subjects to match
// (after stripping such prefixes) to keep the reply in the thread.
func ReplySubject(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 3 && strings.EqualFold(s[:3], "re:") {
		return s
	}
	if s == "" {
		return "Re:"
	}
	return "Re: " + s
}

// refIDRe finds msg-ids in a References or In-Reply-To value. Real headers
// carry comments and junk ("<id> (Bob's message of ...)"); only the
// bracketed ids matter for threading.
var refIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[!-;=?-~]+>`) })

// ReplyReferences returns the References value for a reply: the parent's
// References (or, when it has none, its In-Reply-To, per common practice for
// clients that omit References) followed by the parent's own Message-ID.
// Only well-formed <ids> are kept, single-space separated, each once.
func ReplyReferences(parentRefs, parentInReplyTo, parentMessageID string) string {
	base := refIDRe().FindAllString(parentRefs, -1)
	if len(base) == 0 {
		base = refIDRe().FindAllString(parentInReplyTo, -1)
	}
	own := strings.TrimSpace(parentMessageID)
	if own != "" && !strings.HasPrefix(own, "<") {
		own = "<" + own + ">"
	}
	if refIDRe().FindString(own) != own {
		own = "" // not a usable id; keep the ancestors only
	}
	// Each id once; the parent's own id goes last, where threading
	// algorithms (RFC 5256, JWZ) look for the immediate parent.
	seen := map[string]bool{own: true}
	out := make([]string, 0, len(base)+1)
	for _, id := range base {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if own != "" {
		out = append(out, own)
	}
	return strings.Join(out, " ")
}
