package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Kind is what a request asks to do; it is the `type` of an approval file.
type Kind string

const (
	KindSend    Kind = "email_send"
	KindReply   Kind = "email_reply"
	KindForward Kind = "email_forward"
)

// Mode selects how strictly an approval must match a call.
type Mode string

const (
	// ModeContent (the default) requires the approval to carry exactly the
	// call's recipient or thread, subject and body.
	ModeContent Mode = "content"
	// ModeRecipient accepts the original contract's human-written files,
	// matched on type, status and `to` / `thread_id` alone.
	ModeRecipient Mode = "recipient"
)

// Request is one send or reply as the agent asked for it.
type Request struct {
	Kind Kind
	// Account is the Gmail account that sends (or acts): its name in the
	// home (internal/account; "" is the default account, the first). It
	// is bound like From (an approval cannot move an email to another
	// account) and named first in the request file. The default account
	// is not hashed, so a request of a home with one account hashes as it
	// always did.
	Account string
	// To is the single recipient of a send ("a@b.c" or "Name <a@b.c>"),
	// compared case-insensitively on the address part; the display name is
	// not part of the approval. For a reply it is optional: when the caller
	// has resolved the recipient it is shown to the human and bound in
	// content mode.
	To string
	// ToList holds the further To recipients after To, and Cc and Bcc the
	// copies, each as given ("a@b.c" or "Name <a@b.c>"). Every one is
	// shown to the human and bound by the approval (address part, case
	// folded), so a recipient added after the approval makes a different
	// request. A request without them hashes as before they existed.
	ToList, Cc, Bcc []string
	// ThreadID and MessageID identify the Gmail thread and the message a
	// reply answers; for a forward MessageID is the message forwarded.
	ThreadID, MessageID string
	Subject, Body       string
	// DraftID is the Gmail draft a KindSendDraft sends (kind_action.go);
	// "" for every other kind.
	DraftID string
	// Target is what a settings kind acts on (kind_settings.go): a label
	// id, a filter, the vacation responder, a message's List-Unsubscribe;
	// "" for every other kind.
	Target string
	// HTMLSHA256 is the hex SHA-256 of the HTML part sent with the text
	// (mailmsg.Digest), "" when the email is text only: the human reads the
	// text and is told an HTML part goes too, and the approval binds it.
	HTMLSHA256 string
	// HTMLFrom says where the HTML part came from (mailmsg.FormatMarkdown:
	// rendered from the Markdown body the approver reads; FormatHTML:
	// written in HTML by the agent, the body being its text converted for
	// reading), and HTMLLinks lists its every link. Both describe the HTML
	// part to the approver and the agent; they are not hashed (HTMLSHA256
	// binds the HTML itself, and they derive from it).
	HTMLFrom  mailmsg.BodyFormat
	HTMLLinks []mailmsg.Link
	// HTML is the HTML part itself when the agent wrote it (HTMLFrom
	// FormatHTML), kept beside the vault's requests so the approval page
	// can show it (htmlpart.go); not hashed (HTMLSHA256 binds it).
	HTML string
	// Attachments are the files sent with the email, each bound by name,
	// size and SHA-256.
	Attachments []Attachment
	// From is the send-as address the email goes out from ("": the
	// account's default, as Gmail chooses). mailgate only puts here an
	// address the account's verified users.settings.sendAs lists; it is
	// bound (an approval cannot change who an email comes from) and shown
	// first in the request.
	From string
	// SendAt, when set, is the time the email is to be sent (send later,
	// later.go): bound like the content, so the approval approves the
	// time too; zero sends it when the approval is used.
	SendAt time.Time
	// Original is the message a reply answers or a forward forwards, as
	// the server read it from Gmail, kept beside the request for the
	// approver (original.go); nil when not known. Not hashed: the bound
	// message_id fixes it (original.go says why that is sound).
	Original *Original
	// OutgoingMessageID is the Message-ID the email goes out with (see
	// MessageIDFor): set on an Approval's Final, "" on an agent's call. It
	// is not part of SHA256: it names one request of the email, not the
	// email.
	OutgoingMessageID string
}

// Attachment is what an approval binds of one attached file.
type Attachment struct {
	Name   string
	Size   int64
	SHA256 string // hex
}

// line is how an attachment is listed in a request file, and compared.
func (a Attachment) line() string {
	size := mailmsg.FormatSize(a.Size)
	if a.Size >= 1000 {
		size += fmt.Sprintf(", %d bytes", a.Size)
	}
	return fmt.Sprintf("%s (%s, sha256 %s)", a.Name, size, strings.ToLower(a.SHA256))
}

// recipientList is one recipient header of a request: its name, as in the
// request file ("to", "cc", "bcc"), and the addresses as given.
type recipientList struct {
	field, header string
	addrs         []string
}

// recipients returns the request's To (To then ToList), Cc and Bcc.
func (r Request) recipients() []recipientList {
	var to []string
	if strings.TrimSpace(r.To) != "" {
		to = append(to, r.To)
	}
	return []recipientList{{"to", "To", append(to, r.ToList...)}, {"cc", "Cc", r.Cc}, {"bcc", "Bcc", r.Bcc}}
}

// RecipientCount is the number of recipients, To, Cc and Bcc together.
func (r Request) RecipientCount() int {
	n := 0
	for _, l := range r.recipients() {
		n += len(l.addrs)
	}
	return n
}

// Recipients returns the bare addresses of To (To then ToList), Cc and Bcc,
// as the email is to be addressed (invalid ones dropped: Validate refuses
// them first).
func (r Request) Recipients() (to, cc, bcc []string) {
	out := make([][]string, 3)
	for i, l := range r.recipients() {
		out[i] = bareAddresses(l.addrs)
	}
	return out[0], out[1], out[2]
}

func bareAddresses(list []string) []string {
	var out []string
	for _, s := range list {
		if a, err := parseSingleAddress(s); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// bound returns the lower-cased bare addresses of list: what an approval
// compares.
func bound(list []string) []string {
	out := bareAddresses(list)
	for i, a := range out {
		out[i] = strings.ToLower(a)
	}
	return out
}

// ValidationError reports a request that must not reach the gate at all:
// the one validator's error (mailmsg.Validate), or an unknown type.
type ValidationError = mailmsg.InvalidError

// Validate checks the request before anything else happens: a known kind,
// then mailmsg.Validate, the one validator and the one set of limits of an
// outgoing email (exactly one plain recipient address, Gmail-style ids, no
// CR/LF or other control characters in header values, valid UTF-8 and
// bounded sizes). The limits keep a request file well under the vault's
// default MaxFileSize, so every request mailgate writes can be read back.
func (r Request) Validate() error {
	if r.Account != "" {
		if err := account.ValidName(r.Account); err != nil {
			return &ValidationError{Field: "account", Value: r.Account, Text: "Invalid account: " + err.Error()}
		}
	}
	in := mailmsg.Input{Subject: r.Subject, Body: r.Body, Cc: r.Cc, Bcc: r.Bcc}
	to := r.recipients()[0].addrs
	switch r.Kind {
	case KindSend:
		in.To = append([]string{r.To}, r.ToList...)
	case KindReply:
		in.Reply, in.ThreadID, in.MessageID, in.To = true, r.ThreadID, r.MessageID, to
	case KindForward:
		// A forward answers no thread, but names the message it forwards:
		// checked as a reply's ids are (the thread is that message's).
		in.Reply, in.ThreadID, in.MessageID, in.To = true, r.MessageID, r.MessageID, to
		if r.RecipientCount() == 0 {
			return &ValidationError{Field: "to", Text: "at least one recipient is required"}
		}
	case KindSendDraft, KindTrash: // kind_action.go
		return r.validateAction()
	case KindLabelDelete, KindFilterCreate, KindVacation, KindUnsubscribe: // kind_settings.go
		return r.validateSettings()
	default:
		return &ValidationError{Field: "type", Value: string(r.Kind), Text: "Invalid type: unknown request type " + strconv.Quote(string(r.Kind))}
	}
	if _, err := mailmsg.Validate(in); err != nil {
		return err
	}
	if r.From != "" {
		if _, err := parseSingleAddress(r.From); err != nil {
			return &ValidationError{Field: "from", Value: r.From, Text: "Invalid from: " + err.Error()}
		}
	}
	if r.HTMLSHA256 != "" && !isHex(r.HTMLSHA256) {
		return &ValidationError{Field: "html", Text: "invalid HTML part digest"}
	}
	for _, a := range r.Attachments {
		if a.Name == "" || !utf8.ValidString(a.Name) || mailmsg.CheckHeaderValue("attachment", a.Name) != nil || a.Size < 0 || !isHex(a.SHA256) {
			return &ValidationError{Field: "attachments", Value: a.Name, Text: "invalid attachment " + printable(a.Name)}
		}
	}
	return nil
}

func isHex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// Address returns the request's bare (first) recipient address as given (no
// display name), or "" when there is none or it is invalid. Senders should address the email
// to exactly this.
func (r Request) Address() string {
	to := r.To
	if to == "" && len(r.ToList) > 0 {
		to = r.ToList[0] // a forward lists all its To recipients
	}
	a, err := parseSingleAddress(to)
	if err != nil {
		return ""
	}
	return a
}

// SHA256 returns the hex SHA-256 of the request's canonical serialisation,
// which binds an approval to exactly one email:
//
//	"mailgate-request-v1\n"
//	then for each field, in this order: kind, to, thread_id, message_id, subject, body
//	    and, for a send_draft only, draft_id
//	    <name> SP <decimal byte length> LF <value> LF
//
// where to is the bare address in lower case ("" when absent) and body has
// CRLF and CR turned into LF; then, only when present, so that a request
// without them hashes as it always did: to_more, cc, bcc (the lower-cased
// bare addresses, one per line), from (the same), send_at (RFC 3339 UTC), html_sha256, and attachments (their
// count, then name, size and sha256 of each). Length prefixes make the
// encoding unambiguous.
func (r Request) SHA256() string {
	to := ""
	if a, err := parseSingleAddress(r.To); err == nil {
		to = strings.ToLower(a)
	}
	h := sha256.New()
	h.Write([]byte("mailgate-request-v1\n"))
	for _, f := range [...]struct{ name, v string }{
		{"kind", string(r.Kind)},
		{"to", to},
		{"thread_id", r.ThreadID},
		{"message_id", r.MessageID},
		{"subject", r.Subject},
		{"body", normalizeNewlines(r.Body)},
	} {
		fmt.Fprintf(h, "%s %d\n%s\n", f.name, len(f.v), f.v)
	}
	if r.DraftID != "" { // send_draft (kind_action.go); every other hash is as before
		fmt.Fprintf(h, "draft_id %d\n%s\n", len(r.DraftID), r.DraftID)
	}
	if r.Target != "" { // the settings kinds (kind_settings.go)
		fmt.Fprintf(h, "target %d\n%s\n", len(r.Target), r.Target)
	}
	field := func(name, v string) { fmt.Fprintf(h, "%s %d\n%s\n", name, len(v), v) }
	for _, l := range [...]struct {
		name  string
		addrs []string
	}{{"to_more", r.ToList}, {"cc", r.Cc}, {"bcc", r.Bcc}} {
		if len(l.addrs) > 0 {
			field(l.name, strings.Join(bound(l.addrs), "\n"))
		}
	}
	if !account.IsDefault(r.Account) {
		field("account", r.Account)
	}
	if r.From != "" {
		field("from", strings.Join(bound([]string{r.From}), ""))
	}
	if !r.SendAt.IsZero() {
		field("send_at", FormatSendAt(r.SendAt))
	}
	if r.HTMLSHA256 != "" {
		field("html_sha256", strings.ToLower(r.HTMLSHA256))
	}
	if len(r.Attachments) > 0 {
		field("attachments", strconv.Itoa(len(r.Attachments)))
		for _, a := range r.Attachments {
			field("name", a.Name)
			field("size", strconv.FormatInt(a.Size, 10))
			field("sha256", strings.ToLower(a.SHA256))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Same reports whether r and o ask for the same email (the same SHA256).
func (r Request) Same(o Request) bool { return r.SHA256() == o.SHA256() }

// parseSingleAddress returns the bare address of s, parsed by
// mailmsg.ParseAddress (mailgate's one address parser: exactly one address,
// no groups, comments, encoded words, lists or control characters, so what a
// human reads is what is addressed).
func parseSingleAddress(s string) (string, error) {
	a, err := mailmsg.ParseAddress(s)
	if err != nil {
		return "", err
	}
	return a.Address, nil
}

// normalizeNewlines turns CRLF and lone CR into LF: the only normalisation
// applied before comparing bodies.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func printable(s string) string { return mailmsg.Quote(s) }

// HTMLDescription is how every view of a request (the request file,
// mailgate approvals show, the agent's answer) says what the HTML part is,
// from where it came (a request's HTMLFrom, or a file's html_from).
func HTMLDescription(from string) string {
	switch mailmsg.BodyFormat(from) {
	case mailmsg.FormatMarkdown:
		return "An HTML part goes too, rendered from the Markdown below; this approval binds both."
	case mailmsg.FormatHTML:
		return "An HTML part goes too, written in HTML by the agent: the text below is that HTML converted to text for reading, and this approval binds the HTML. Images, scripts, forms, hidden or struck text and direction changes are never sent."
	}
	return "An HTML part goes too; this approval binds both."
}

// HTMLLinkLines are the lines listing an HTML part's links, or one saying
// it has none.
func HTMLLinkLines(links []string) []string {
	if len(links) == 0 {
		return []string{"Links in the HTML part: none (and no images: mailgate never sends them)."}
	}
	out := []string{fmt.Sprintf("Links in the HTML part (%d; no images: mailgate never sends them):", len(links))}
	for _, l := range links {
		out = append(out, "- "+l)
	}
	return out
}

// LinkStrings renders links as the request file lists them (and the
// gate's answer, which shows the request).
func LinkStrings(links []mailmsg.Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.String()
	}
	return out
}
