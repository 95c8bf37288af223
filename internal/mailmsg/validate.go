package mailmsg

import (
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The limits on an outgoing email. They are the only ones: draft_email,
// send_email and reply_email check them through Validate before anything
// happens, and the gate and the approval vault check them again through the
// same Validate (approval.Request.Validate), so an email one of them
// accepts is never refused by another for its size.
const (
	// MaxRecipients bounds To, Cc and Bcc together.
	MaxRecipients = 50
	// MaxSubjectBytes is RFC 5322's line limit.
	MaxSubjectBytes = 998
	// MaxBodyBytes bounds a body. It keeps a request file in the approval
	// vault well under the vault's default file size limit (1 MiB), so
	// every request mailgate writes can be read back, edited and approved.
	MaxBodyBytes = 512 << 10
	// MaxIDBytes bounds a Gmail thread or message id (Gmail's are 16 hex
	// characters).
	MaxIDBytes = 128
	// MaxAddressBytes bounds one recipient as given, display name
	// included. A single address is at most 254 octets (RFC 5321
	// §4.5.3.1.3); the rest leaves room for a display name while keeping
	// every rendered header line far below 998 octets.
	MaxAddressBytes = 512
)

// Input is an outgoing email as a tool call (or an approval file) gives it:
// unchecked text. Each recipient list holds one address per element; today's
// tools give To exactly one.
type Input struct {
	To, Cc, Bcc []string
	Subject     string
	Body        string // plain text
	// Reply marks a reply: ThreadID and MessageID (the Gmail thread and the
	// message answered) are then required, and the recipient may be left
	// out (it is resolved from the parent).
	Reply               bool
	ThreadID, MessageID string
}

// Recipients is a list of validated addresses, in the order given.
type Recipients []*mail.Address

// Addresses returns the bare addresses (no display names).
func (r Recipients) Addresses() []string {
	out := make([]string, len(r))
	for i, a := range r {
		out[i] = a.Address
	}
	return out
}

// Email is an Input that passed Validate: every address parsed by
// ParseAddress, every limit held, ids trimmed.
type Email struct {
	To, Cc, Bcc         Recipients
	Subject, Body       string
	Reply               bool
	ThreadID, MessageID string
}

// InvalidError reports an outgoing email refused by Validate. Error() is the
// text the tools answer after "Error: "; Field names the input for logs and
// the audit log ("to", "cc", "bcc", "recipients", "subject", "body",
// "thread_id", "message_id", or a caller's own such as "type").
type InvalidError struct {
	Field string
	Value string // the refused value, when short enough to be worth quoting
	Text  string
	Err   error // the underlying error (*InvalidAddressError, *HeaderInjectionError), if any
}

func (e *InvalidError) Error() string {
	if e.Text == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Text
}

func (e *InvalidError) Unwrap() error { return e.Err }

// Validate checks an outgoing email against the limits above and returns it
// typed. It is the one validator of an outgoing email: what it accepts can be
// rendered by Build, bound by an approval and sent. Errors are *InvalidError.
func Validate(in Input) (*Email, error) {
	e := &Email{Subject: in.Subject, Body: in.Body, Reply: in.Reply}
	if in.Reply {
		var err error
		if e.ThreadID, e.MessageID, err = validateIDs(in.ThreadID, in.MessageID); err != nil {
			return nil, err
		}
	}
	n := len(in.To) + len(in.Cc) + len(in.Bcc)
	switch {
	case n > MaxRecipients:
		return nil, &InvalidError{Field: "recipients",
			Text: fmt.Sprintf("too many recipients: %d, at most %d in all (to, cc and bcc)", n, MaxRecipients)}
	case n == 0 && !in.Reply:
		return nil, &InvalidError{Field: "to", Text: "at least one recipient is required"}
	}
	for _, l := range []struct {
		field string
		in    []string
		out   *Recipients
	}{{"to", in.To, &e.To}, {"cc", in.Cc, &e.Cc}, {"bcc", in.Bcc, &e.Bcc}} {
		for _, s := range l.in {
			a, err := ParseAddress(s)
			if err != nil {
				return nil, &InvalidError{Field: l.field, Value: s, Err: err}
			}
			*l.out = append(*l.out, a)
		}
	}
	if err := validateText(in.Subject, in.Body); err != nil {
		return nil, err
	}
	return e, nil
}

// validateIDs checks a reply's thread and message ids: required, no line
// breaks (checked on the raw values: trimming first would hide a smuggled
// CR/LF), then, trimmed, Gmail's alphabet within MaxIDBytes.
func validateIDs(threadID, messageID string) (string, string, error) {
	t, m := strings.TrimSpace(threadID), strings.TrimSpace(messageID)
	if t == "" || m == "" {
		return "", "", &InvalidError{Field: "thread_id", Text: "thread_id and message_id are both required"}
	}
	for _, f := range [...]struct{ name, raw, v string }{{"thread_id", threadID, t}, {"message_id", messageID, m}} {
		if CheckHeaderValue(f.name, f.raw) != nil || !isID(f.v) {
			return "", "", &InvalidError{Field: f.name, Value: f.raw, Text: fmt.Sprintf("invalid %s %q", f.name, f.raw)}
		}
	}
	return t, m, nil
}

// isID reports a Gmail-style identifier: 1..MaxIDBytes of [A-Za-z0-9_.-].
func isID(s string) bool {
	if s == "" || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validateText checks the subject (one header line) and the body.
func validateText(subject, body string) error {
	if err := CheckHeaderValue("subject", subject); err != nil {
		return &InvalidError{Field: "subject", Err: err}
	}
	if len(subject) > MaxSubjectBytes {
		return &InvalidError{Field: "subject", Text: fmt.Sprintf("subject is longer than %d bytes", MaxSubjectBytes)}
	}
	if len(body) > MaxBodyBytes {
		return &InvalidError{Field: "body", Text: fmt.Sprintf("body is larger than %d bytes", MaxBodyBytes)}
	}
	if !utf8.ValidString(subject) || !utf8.ValidString(body) {
		field := "subject"
		if utf8.ValidString(subject) {
			field = "body"
		}
		return &InvalidError{Field: field, Text: "subject and body must be valid UTF-8"}
	}
	if hasTextControl(subject, false) {
		return &InvalidError{Field: "subject", Text: "Invalid subject: line breaks or control characters"}
	}
	if hasTextControl(body, true) {
		return &InvalidError{Field: "body", Text: "Invalid body: control characters other than tab and line breaks"}
	}
	return nil
}

// hasTextControl reports C0 controls (except tab, and CR/LF when
// multiline), DEL and C1 controls.
func hasTextControl(s string, multiline bool) bool {
	for _, r := range s {
		switch {
		case r == '\t':
		case multiline && (r == '\n' || r == '\r'):
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return true
		}
	}
	return false
}

// Quote returns s as is when it is printable, else Go-quoted: for error
// texts that repeat a refused value.
func Quote(s string) string {
	if hasTextControl(s, false) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}
