package mailmsg

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// Every header of every message mailgate builds (an email for Gmail, an
// agent-mail copy inserted into the user's mailbox) is written through
// Header, the one header encoder. Values reach headers from agents and from
// strangers' mail; a CR or LF in one would end the field and start a new
// one (a forged Reply-To, a second recipient, a fake body). Header has two
// doors and no third:
//
//   - Text: unstructured text (Subject, a channel or thread name, any label
//     a person reads). Anything is accepted; a value that is not plain
//     printable ASCII goes out as RFC 2047 encoded-words (EncodeHeaderValue),
//     so control characters travel encoded, never raw.
//   - Structured: values with a grammar of their own (addresses already
//     rendered, message ids, dates, MIME parameters). They cannot be
//     encoded, so a control character (CR, LF, NUL, …) or invalid UTF-8
//     refuses the whole message: a structured value holding a line break is
//     an attack or a bug, never something to repair.
//
// Field names are checked too (RFC 5322 ftext), and long lines are folded.

// EncodeHeaderValue returns s as an unstructured header value: unchanged
// when it is plain printable ASCII that reads back byte for byte, otherwise
// as RFC 2047 encoded-words (UTF-8, Q or B, at most 75 characters each,
// separated by single spaces). The result holds no CR, LF or other control
// character whatever s holds, and mime.WordDecoder.DecodeHeader returns s.
func EncodeHeaderValue(s string) string { return encodeText(s) }

// HeaderError reports a header mailgate refused to write.
type HeaderError struct {
	Field  string
	Reason string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("header %s: %s", e.Field, e.Reason)
}

// Header is the header of a message being built, in output order. The
// zero value is ready to use. The first refusal is kept and returned by
// Bytes; later calls are ignored.
type Header struct {
	fields [][2]string
	err    error
}

// Text adds an unstructured field, encoding value as EncodeHeaderValue
// does.
func (h *Header) Text(name, value string) {
	h.add(name, EncodeHeaderValue(value))
}

// Structured adds a field whose value has a grammar of its own and must
// already be in wire form. It is refused, with the whole message, when it
// holds a control character (CR, LF, NUL, any C0 but tab, DEL, C1) or is not
// valid UTF-8; non-ASCII UTF-8 stays (RFC 6532: an internationalized
// address is written as is).
func (h *Header) Structured(name, value string) {
	if !utf8.ValidString(value) {
		h.fail(name, "not valid UTF-8")
		return
	}
	for i, r := range value {
		if (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			h.fail(name, fmt.Sprintf("control character U+%04X at byte %d", r, i))
			return
		}
	}
	h.add(name, value)
}

// Addresses adds an address list field (From, To, Cc, Bcc); display names
// that are not plain ASCII are encoded. No address omits the field.
func (h *Header) Addresses(name string, addrs ...*mail.Address) {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if a == nil {
			continue
		}
		if hasTextControl(a.Name, false) || hasTextControl(a.Address, false) || strings.ContainsAny(a.Address, " \t") {
			h.fail(name, "an address holds a control character or a space")
			return
		}
		out = append(out, formatAddress(a))
	}
	if len(out) > 0 {
		h.Structured(name, strings.Join(out, ", "))
	}
}

func (h *Header) add(name, value string) {
	if h.err != nil {
		return
	}
	if !validFieldName(name) {
		h.fail(name, "not a valid field name")
		return
	}
	h.fields = append(h.fields, [2]string{name, value})
}

func (h *Header) fail(name, reason string) {
	if h.err == nil {
		h.err = &HeaderError{Field: name, Reason: reason}
	}
}

// Err is the first refusal, or nil.
func (h *Header) Err() error { return h.err }

// Bytes renders the fields, folded, each ended by CRLF, and the empty line
// that ends the header.
func (h *Header) Bytes() ([]byte, error) {
	if h.err != nil {
		return nil, h.err
	}
	var b strings.Builder
	for _, f := range h.fields {
		b.WriteString(fold(f[0], f[1]))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String()), nil
}

// validFieldName: 1–76 printable ASCII characters other than ':' (RFC
// 5322 ftext), so "Name: " still leaves room on a 78-character line.
func validFieldName(name string) bool {
	if name == "" || len(name) > 76 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x21 || c > 0x7e || c == ':' {
			return false
		}
	}
	return true
}
