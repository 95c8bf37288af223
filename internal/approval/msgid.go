package approval

import (
	"regexp"
	"strings"
	"sync"
)

// Every email mailgate sends from a request file goes out with a Message-ID
// fixed when the request is written (outgoing_message_id in its
// frontmatter), so that whether it left can be looked up in Sent
// (rfc822msgid:) after a process died between the claim and the record.
// The id names the request it was first issued for: <request_id@mailgate.local>.
// A request written again for an email whose earlier copy has no known
// outcome keeps that copy's id, so sending the new one first asks Sent
// whether the old one left, and a second approval cannot deliver it twice.

// messageIDDomain is the right part of the Message-IDs mailgate fixes.
const messageIDDomain = "mailgate.local"

// MessageIDFor is the Message-ID of the request with this request_id.
func MessageIDFor(requestID string) string { return "<" + requestID + "@" + messageIDDomain + ">" }

var outgoingIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<([0-9a-f]+)-[0-9a-f]{8}@mailgate\.local>$`) })

// validMessageID reports whether id is a Message-ID mailgate fixed for a
// request of the content whose hash is sha: an agent editing the field can
// at most point it at another request of the same email.
func validMessageID(id, sha string) bool {
	m := outgoingIDRe().FindStringSubmatch(id)
	return m != nil && len(sha) >= idHex && strings.EqualFold(m[1], nameID(strings.ToLower(sha)))
}

// inheritedMessageID is the Message-ID a new request for the email of
// content id takes over from its last consumed copy: that copy's, when its
// outcome is not known (it may have left), else "" (a fresh one).
func inheritedMessageID(earlier *Handled, id string) string {
	if earlier == nil || earlier.Status == StatusSent || earlier.Status == StatusFailed {
		return ""
	}
	if m := outgoingIDRe().FindStringSubmatch(earlier.MessageID); m != nil && m[1] == id {
		return earlier.MessageID
	}
	return ""
}

// approvalMessageID is the Message-ID an approval's email goes out with:
// the file's outgoing_message_id when it is one mailgate fixed for this
// email, else the one its request_id names, else "" (a hand-written file:
// the gate makes one up and audits it before the claim). inherited is true
// when the id was first issued for an earlier request: Sent is then asked
// before sending.
func approvalMessageID(p *parsedFile, rid, sha string) (id string, inherited bool) {
	own := ""
	if outgoingIDRe().MatchString(MessageIDFor(rid)) {
		own = MessageIDFor(rid)
	}
	if f := strings.TrimSpace(p.OutgoingMsgID); f != "" && validMessageID(f, sha) {
		return f, f != own
	}
	return own, false
}
