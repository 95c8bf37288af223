package mailmsg

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// HeaderInjectionError reports a header value holding CR, LF or NUL. Such
// values are refused, never stripped: stripping can glue an injected
// "Bcc: ..." onto the real value instead of removing it.
type HeaderInjectionError struct {
	Field string // header or input field name, e.g. "Subject"
}

func (e *HeaderInjectionError) Error() string {
	return "Invalid " + strings.ToLower(e.Field) + ": line breaks and NUL characters are not allowed"
}

// CheckHeaderValue refuses CR, LF and NUL in a value meant for a header.
func CheckHeaderValue(field, v string) error {
	if strings.ContainsAny(v, "\r\n\x00") {
		return &HeaderInjectionError{Field: field}
	}
	return nil
}

// Outgoing is a message to render with Build: plain text, optionally with
// an HTML alternative and attachments (compose.go).
type Outgoing struct {
	From       string          // optional; "" omits From and Gmail fills in the account
	To         *mail.Address   // the first (or only) To recipient (see ParseAddress)
	ToList     []*mail.Address // further To recipients, written after To
	Cc         []*mail.Address
	Bcc        []*mail.Address // written as a Bcc header: Gmail sends to them and strips it
	Subject    string
	Body       string    // plain text, UTF-8; any line ending style
	InReplyTo  string    // for replies: "<parent@id>"
	References string    // for replies: "<a@id> <b@id>"
	Date       time.Time // zero means now
	MessageID  string    // "" generates <random@domain-of-From> or <random@mailgate.local>

	// HTML, when set, goes out as the text/html alternative of Body. It is
	// written as given: produce it with RenderBody (Markdown rendered, or
	// HTML sanitized), never from an agent's input directly.
	HTML        string
	Attachments []Attachment
	// Boundary, when set (letters and digits, at most 40), makes the
	// multipart boundaries deterministic, for golden tests.
	Boundary string
}

// ErrNoRecipient is returned by Build when Outgoing has no To, Cc or Bcc.
var ErrNoRecipient = errors.New("mailmsg: no recipient")

// msgIDRe is one msg-id as found in real mail: angle brackets around
// printable ASCII. It is looser than RFC 5322 (no '@' required) because
// References copied from a parent come from arbitrary clients.
var msgIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<[!-;=?-~]+>$`) })

// Build renders o as an RFC 5322 message with CRLF line ends.
//
// The body (and the HTML part, if any) always goes out as quoted-printable
// UTF-8 (even when it is pure ASCII), so one code path handles long lines,
// trailing spaces and lone CRs, attachments go out as base64, and the output
// is always 7-bit (compose.go has the MIME structure). A message larger
// than MaxMessageBytes once encoded is refused. Subject and display names that are not
// plain printable ASCII become RFC 2047 encoded-words of at most 75
// characters, folded onto continuation lines. Every value is validated
// before anything is produced.
func Build(o Outgoing) ([]byte, error) {
	o, err := prepare(o)
	if err != nil {
		return nil, err
	}
	h, err := headers(o)
	if err != nil {
		return nil, err
	}
	// Every field goes out through the one header encoder: Subject as
	// text, the rest (validated above) as structured values it re-checks.
	var hdr Header
	for _, f := range h {
		if f[0] == "Subject" {
			hdr.Text(f[0], o.Subject)
			continue
		}
		hdr.Structured(f[0], f[1])
	}
	head, err := hdr.Bytes()
	if err != nil {
		return nil, err
	}
	// Room for the attachments at once: a 19 MB one no longer grows the
	// buffer by doubling, copying and clearing ~50 MB on the way.
	size := len(head) + len(o.Body) + len(o.HTML) + 4096
	for _, a := range o.Attachments {
		size += base64Size(len(a.Data)) + 512
	}
	var buf bytes.Buffer
	buf.Grow(size)
	buf.Write(head)
	if err := writeBody(&buf, o); err != nil {
		return nil, err
	}
	if buf.Len() > MaxMessageBytes {
		return nil, &MessageTooLargeError{Size: int64(buf.Len()), Limit: MaxMessageBytes}
	}
	return buf.Bytes(), nil
}

// writeQP writes s as quoted-printable. Text mode: the writer turns \n, \r
// and \r\n alike into CRLF.
func writeQP(w io.Writer, s string) error {
	qp := quotedprintable.NewWriter(w)
	if _, err := qp.Write([]byte(s)); err != nil {
		return fmt.Errorf("encoding body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return fmt.Errorf("encoding body: %w", err)
	}
	return nil
}

// headers validates o and returns the header fields in output order.
func headers(o Outgoing) ([][2]string, error) {
	checks := [][2]string{
		{"From", o.From}, {"Subject", o.Subject}, {"In-Reply-To", o.InReplyTo},
		{"References", o.References}, {"Message-ID", o.MessageID},
	}
	for _, l := range recipientFields(o) {
		for _, a := range l.addrs {
			checks = append(checks, [2]string{l.name, a.Name}, [2]string{l.name, a.Address})
		}
	}
	for _, c := range checks {
		if err := CheckHeaderValue(c[0], c[1]); err != nil {
			return nil, err
		}
	}
	if !utf8.ValidString(o.Subject) {
		return nil, errors.New("invalid subject: not valid UTF-8")
	}
	if !utf8.ValidString(o.Body) {
		return nil, errors.New("invalid body: not valid UTF-8")
	}

	var h [][2]string
	domain := "mailgate.local"
	if o.From != "" {
		from, err := ParseAddress(o.From)
		if err != nil {
			return nil, err
		}
		h = append(h, [2]string{"From", formatAddress(from)})
		if d := from.Address[strings.LastIndexByte(from.Address, '@')+1:]; isHostname(d) {
			domain = d
		}
	}
	n := 0
	for _, l := range recipientFields(o) {
		out := make([]string, 0, len(l.addrs))
		for _, a := range l.addrs {
			if reason := checkAddress(a); reason != "" {
				return nil, &InvalidAddressError{Input: a.String(), Reason: reason}
			}
			out = append(out, formatAddress(a))
		}
		if len(out) > 0 {
			h = append(h, [2]string{l.name, strings.Join(out, ", ")})
		}
		n += len(out)
	}
	if n == 0 {
		return nil, ErrNoRecipient
	}
	h = append(h, [2]string{"Subject", o.Subject}) // encoded by Build's Header.Text

	date := o.Date
	if date.IsZero() {
		date = time.Now()
	}
	h = append(h, [2]string{"Date", date.Format(time.RFC1123Z)})

	id := o.MessageID
	if id == "" {
		id = "<" + rand.Text() + "@" + domain + ">"
	} else if !msgIDRe().MatchString(id) {
		return nil, fmt.Errorf("invalid message-id %q: want one <id@domain>", id)
	}
	h = append(h, [2]string{"Message-ID", id})

	for _, f := range [][2]string{{"In-Reply-To", o.InReplyTo}, {"References", o.References}} {
		if strings.TrimSpace(f[1]) == "" {
			continue
		}
		ids := strings.Fields(f[1])
		for _, id := range ids {
			if !msgIDRe().MatchString(id) {
				return nil, fmt.Errorf("invalid %s: %q is not a <message-id>", strings.ToLower(f[0]), id)
			}
		}
		// Structured header: whitespace between ids is not significant, so
		// normalise it (folding relies on single spaces).
		h = append(h, [2]string{f[0], strings.Join(ids, " ")})
	}
	h = append(h, [2]string{"MIME-Version", "1.0"})
	ct, err := bodyHeaders(o)
	if err != nil {
		return nil, err
	}
	return append(h, ct...), nil
}

// isHostname reports an ASCII LDH domain usable as a Message-ID right part.
func isHostname(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// isPlainText reports whether s may be written into a header unencoded and
// still read back byte for byte: printable ASCII, single inner spaces, no
// edge spaces (unfolding trims and collapses whitespace), no "=?" that a
// decoder could take for an encoded-word, no word too long to fold.
func isPlainText(s string) bool {
	if strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") ||
		strings.Contains(s, "  ") || strings.Contains(s, "=?") {
		return false
	}
	word := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			return false
		}
		if c == ' ' {
			word = 0
			continue
		}
		if word++; word > 66 {
			return false
		}
	}
	return true
}

// encodeText returns s unchanged when it is plain, else as encoded-words.
func encodeText(s string) string {
	if isPlainText(s) {
		return s
	}
	return encodeWords(s)
}

// encodeWords encodes all of s as RFC 2047 encoded-words, each at most 75
// characters, split on character boundaries and separated by single spaces
// (which decoders drop between adjacent encoded-words). Q is used when it is
// no longer than B. The Q alphabet is the restricted one of RFC 2047 §5(3),
// valid in a display name as well as in Subject.
func encodeWords(s string) string {
	const maxPayload = 75 - len("=?UTF-8?Q?") - len("?=") // 63
	qLen := 0
	for i := 0; i < len(s); i++ {
		qLen += qByteLen(s[i])
	}
	useQ := qLen <= base64.StdEncoding.EncodedLen(len(s))

	var words []string
	var cur []byte // raw bytes of the current word
	curQ := 0      // Q-encoded length of cur
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if useQ {
			words = append(words, "=?UTF-8?Q?"+qEncode(cur)+"?=")
		} else {
			words = append(words, "=?UTF-8?B?"+base64.StdEncoding.EncodeToString(cur)+"?=")
		}
		cur, curQ = cur[:0], 0
	}
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		r := s[i : i+size]
		rq := 0
		for j := 0; j < len(r); j++ {
			rq += qByteLen(r[j])
		}
		var n int
		if useQ {
			n = curQ + rq
		} else {
			n = base64.StdEncoding.EncodedLen(len(cur) + len(r))
		}
		if n > maxPayload {
			flush()
		}
		cur = append(cur, r...)
		curQ += rq
		i += size
	}
	flush()
	return strings.Join(words, " ")
}

// qSafe reports bytes that Q encoding may leave literal in any context.
func qSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '!' || c == '*' || c == '+' || c == '-' || c == '/'
}

func qByteLen(c byte) int {
	if qSafe(c) || c == ' ' {
		return 1
	}
	return 3
}

func qEncode(b []byte) string {
	const hex = "0123456789ABCDEF"
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == ' ':
			sb.WriteByte('_')
		case qSafe(c):
			sb.WriteByte(c)
		default:
			sb.WriteByte('=')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&0x0f])
		}
	}
	return sb.String()
}

// fold renders "Name: value", breaking lines longer than 78 characters at
// single spaces (never inside a run of whitespace, which unfolding would
// collapse). The CRLF+space it inserts unfolds back to the one space it
// replaced.
func fold(name, value string) string {
	const limit = 78
	var b strings.Builder
	line := len(name) + 2
	b.WriteString(name)
	b.WriteString(":")
	if value != "" {
		b.WriteByte(' ')
	}
	start := 0 // start of the pending segment in value
	for start < len(value) {
		// Find the next foldable space: single, with non-space neighbours.
		end := len(value)
		for i := start + 1; i < len(value)-1; i++ {
			if value[i] == ' ' && value[i-1] != ' ' && value[i+1] != ' ' && value[i-1] != '\t' && value[i+1] != '\t' {
				end = i
				break
			}
		}
		seg := value[start:end]
		if start > 0 {
			// seg is preceded by the space at start-1.
			if line+1+len(seg) > limit {
				b.WriteString("\r\n ")
				line = 1
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(seg)
		line += len(seg)
		start = end + 1
	}
	return b.String()
}
