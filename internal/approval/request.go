package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"unicode/utf8"
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

// Bounds enforced by Validate. The body bound keeps a request file well
// under the default MaxFileSize, so every request mailgate writes can be read
// back.
const (
	MaxAddressLen = 320
	MaxIDLen      = 256
	MaxSubjectLen = 1000
	MaxBodyLen    = 512 << 10
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
}

// ValidationError reports a request that must not reach the gate at all.
type ValidationError struct {
	Field, Value, Reason string
}

func (e *ValidationError) Error() string {
	if e.Field == "to" {
		// The contract's wording, plus the reason.
		return fmt.Sprintf("Invalid email address format: %s (%s)", printable(e.Value), e.Reason)
	}
	return fmt.Sprintf("Invalid %s: %s", e.Field, e.Reason)
}

// Validate checks the request before anything else happens: a known kind,
// exactly one plain recipient address, Gmail-style ids, no CR/LF or other
// control characters in header values, valid UTF-8 and bounded sizes.
func (r Request) Validate() error {
	switch r.Kind {
	case KindSend:
		if _, err := parseSingleAddress(r.To); err != nil {
			return &ValidationError{Field: "to", Value: r.To, Reason: err.Error()}
		}
	case KindReply:
		for _, f := range []struct{ name, v string }{{"thread_id", r.ThreadID}, {"message_id", r.MessageID}} {
			if err := checkID(f.v); err != nil {
				return &ValidationError{Field: f.name, Value: f.v, Reason: err.Error()}
			}
		}
		if r.To != "" {
			if _, err := parseSingleAddress(r.To); err != nil {
				return &ValidationError{Field: "to", Value: r.To, Reason: err.Error()}
			}
		}
	default:
		return &ValidationError{Field: "type", Value: string(r.Kind), Reason: "unknown request type " + strconv.Quote(string(r.Kind))}
	}
	if err := checkText(r.Subject, MaxSubjectLen, false); err != nil {
		return &ValidationError{Field: "subject", Reason: err.Error()}
	}
	if err := checkText(r.Body, MaxBodyLen, true); err != nil {
		return &ValidationError{Field: "body", Reason: err.Error()}
	}
	return nil
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
	return hex.EncodeToString(h.Sum(nil))
}

// parseSingleAddress accepts exactly "addr-spec", "<addr-spec>" or
// "Display Name <addr-spec>" (the name optionally in double quotes) and
// returns the addr-spec. Groups, comments, encoded words, lists and control
// characters are refused, so what a human reads is what is addressed.
func parseSingleAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", fmt.Errorf("empty address")
	case len(s) > MaxAddressLen:
		return "", fmt.Errorf("longer than %d bytes", MaxAddressLen)
	case !utf8.ValidString(s) || hasControl(s, false):
		return "", fmt.Errorf("control characters or invalid UTF-8")
	}
	spec := s
	if strings.HasSuffix(s, ">") {
		i := strings.LastIndexByte(s, '<')
		if i < 0 {
			return "", fmt.Errorf("unbalanced angle brackets")
		}
		spec = s[i+1 : len(s)-1]
		if err := checkDisplayName(strings.TrimSpace(s[:i])); err != nil {
			return "", err
		}
	}
	a, err := mail.ParseAddress(spec)
	if err != nil || a.Name != "" || a.Address != spec {
		return "", fmt.Errorf("exactly one plain address is allowed")
	}
	at := strings.LastIndexByte(spec, '@')
	if at <= 0 || at == len(spec)-1 || strings.ContainsAny(spec, " \t") {
		return "", fmt.Errorf("not an address")
	}
	return spec, nil
}

func checkDisplayName(name string) error {
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		name = name[1 : len(name)-1]
		if strings.ContainsAny(name, "\"\\@") {
			return fmt.Errorf("display name must not contain quotes, backslashes or @")
		}
		return nil
	}
	if strings.ContainsAny(name, "<>@:;,()\"\\") || strings.Contains(name, "=?") {
		return fmt.Errorf("display name must be plain text (quote it if it has a comma)")
	}
	return nil
}

// checkID accepts Gmail-style identifiers: 1..MaxIDLen of [A-Za-z0-9_.-].
func checkID(s string) error {
	if s == "" {
		return fmt.Errorf("required")
	}
	if len(s) > MaxIDLen {
		return fmt.Errorf("longer than %d bytes", MaxIDLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("only letters, digits, '_', '.' and '-' are allowed")
		}
	}
	return nil
}

func checkText(s string, maxLen int, multiline bool) error {
	if len(s) > maxLen {
		return fmt.Errorf("longer than %d bytes", maxLen)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	if hasControl(s, multiline) {
		if multiline {
			return fmt.Errorf("control characters other than tab and line breaks")
		}
		return fmt.Errorf("line breaks or control characters")
	}
	return nil
}

// hasControl reports C0 controls (except tab, and CR/LF when multiline), DEL
// and C1 controls.
func hasControl(s string, multiline bool) bool {
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

// normalizeNewlines turns CRLF and lone CR into LF: the only normalisation
// applied before comparing bodies.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func printable(s string) string {
	if hasControl(s, false) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}
