package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Kind is what a request asks to do; it is the `type` of an approval file.
type Kind string

const (
	KindSend  Kind = "email_send"
	KindReply Kind = "email_reply"
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
	// To is the single recipient of a send ("a@b.c" or "Name <a@b.c>"),
	// compared case-insensitively on the address part; the display name is
	// not part of the approval. For a reply it is optional: when the caller
	// has resolved the recipient it is shown to the human and bound in
	// content mode.
	To string
	// ThreadID and MessageID identify the Gmail thread and the message a
	// reply answers.
	ThreadID, MessageID string
	Subject, Body       string
	// DraftID is the Gmail draft a KindSendDraft sends (kind_action.go);
	// "" for every other kind.
	DraftID string
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
	in := mailmsg.Input{Subject: r.Subject, Body: r.Body}
	switch r.Kind {
	case KindSend:
		in.To = []string{r.To}
	case KindReply:
		in.Reply, in.ThreadID, in.MessageID = true, r.ThreadID, r.MessageID
		if r.To != "" {
			in.To = []string{r.To}
		}
	case KindSendDraft, KindTrash: // kind_action.go
		return r.validateAction()
	default:
		return &ValidationError{Field: "type", Value: string(r.Kind), Text: "Invalid type: unknown request type " + strconv.Quote(string(r.Kind))}
	}
	_, err := mailmsg.Validate(in)
	return err
}

// Address returns the request's bare recipient address as given (no display
// name), or "" when To is empty or invalid. Senders should address the email
// to exactly this.
func (r Request) Address() string {
	a, err := parseSingleAddress(r.To)
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
// CRLF and CR turned into LF. Length prefixes make the encoding unambiguous.
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
	return hex.EncodeToString(h.Sum(nil))
}

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
