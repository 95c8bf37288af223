package mailmsg

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"net/textproto"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The MIME structure Build writes, chosen by what Outgoing holds:
//
//	text only                 text/plain (quoted-printable)
//	text + HTML               multipart/alternative: text/plain, then text/html
//	either + attachments      multipart/mixed: the above, then each attachment (base64)
//
// The text part comes first in multipart/alternative because RFC 2046
// orders alternatives from plainest to richest: a client shows the last one
// it understands. Boundaries start with "=_", which neither quoted-printable
// (it writes '=' only before two hex digits or a line end) nor base64 can
// produce, so no part can contain a boundary line.

// MaxMessageBytes is Gmail's message size limit (25 MB), checked by Build on
// the encoded message: attachments grow by about a third in base64, so the
// files themselves must stay well below it.
const MaxMessageBytes = 25_000_000

// MessageTooLargeError reports a built message over MaxMessageBytes. Its
// text names both sizes so the agent can say what to drop.
type MessageTooLargeError struct {
	Size  int64 // encoded size, bytes
	Limit int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("message too large: %s encoded (%d bytes) is over Gmail's %s limit (%d bytes); "+
		"attachments grow by about a third when encoded, so send fewer or smaller files",
		FormatSize(e.Size), e.Size, FormatSize(e.Limit), e.Limit)
}

// FormatSize renders n bytes for a person: "812 bytes", "42.5 KB", "25 MB"
// (decimal units, as Gmail states its limit).
func FormatSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + " KB"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + " MB"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Attachment is a file sent with a message.
type Attachment struct {
	// Name is the file name recipients see. Build and Digest pass it
	// through SanitizeFilename, so a name from a stranger's mail (a
	// forward) cannot carry path separators or invisible characters.
	Name string
	// ContentType is the media type; "" picks one from the name's
	// extension (mime.TypeByExtension), else by sniffing the data
	// (http.DetectContentType).
	ContentType string
	Data        []byte
}

// recipientList is one address header and its addresses, nil ones dropped.
type recipientList struct {
	name  string
	addrs []*mail.Address
}

func recipientFields(o Outgoing) []recipientList {
	to := o.ToList
	if o.To != nil {
		to = append([]*mail.Address{o.To}, o.ToList...)
	}
	var out []recipientList
	for _, l := range []recipientList{{"To", to}, {"Cc", o.Cc}, {"Bcc", o.Bcc}} {
		kept := make([]*mail.Address, 0, len(l.addrs))
		for _, a := range l.addrs {
			if a != nil {
				kept = append(kept, a)
			}
		}
		out = append(out, recipientList{l.name, kept})
	}
	return out
}

// prepare validates what headers does not (HTML, boundary) and resolves
// each attachment's name and type, so Build and Digest see the same values.
func prepare(o Outgoing) (Outgoing, error) {
	if !utf8.ValidString(o.HTML) {
		return o, fmt.Errorf("invalid HTML body: not valid UTF-8")
	}
	if o.Boundary == "" {
		o.Boundary = rand.Text()
	} else if len(o.Boundary) > 40 || strings.IndexFunc(o.Boundary, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return o, fmt.Errorf("invalid boundary %q: want at most 40 letters and digits", o.Boundary)
	}
	atts := make([]Attachment, len(o.Attachments))
	for i, a := range o.Attachments {
		atts[i] = Attachment{Name: SanitizeFilename(a.Name), ContentType: a.ContentType, Data: a.Data}
		if atts[i].ContentType == "" {
			atts[i].ContentType = DetectType(atts[i].Name, a.Data)
		}
		mt, params, err := mime.ParseMediaType(atts[i].ContentType)
		if err != nil {
			return o, fmt.Errorf("attachment %s: invalid content type %q: %w", atts[i].Name, atts[i].ContentType, err)
		}
		delete(params, "name") // Build writes its own
		atts[i].ContentType = mime.FormatMediaType(mt, params)
		if atts[i].ContentType == "" {
			return o, fmt.Errorf("attachment %s: invalid content type %q", atts[i].Name, a.ContentType)
		}
	}
	o.Attachments = atts
	return o, nil
}

// DetectType returns the media type of a file: by its name's extension
// when the system knows it, else by sniffing its first 512 bytes.
func DetectType(name string, data []byte) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(name))); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

func boundary(o Outgoing, kind string) string { return "=_mg_" + o.Boundary + "_" + kind }

// bodyHeaders returns the top-level Content-Type (and transfer encoding)
// for o's MIME structure.
func bodyHeaders(o Outgoing) ([][2]string, error) {
	switch {
	case len(o.Attachments) > 0:
		return [][2]string{{"Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": boundary(o, "m")})}}, nil
	case o.HTML != "":
		return [][2]string{{"Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary(o, "a")})}}, nil
	}
	return textHeaders("text/plain"), nil
}

func textHeaders(mediaType string) [][2]string {
	return [][2]string{
		{"Content-Type", mediaType + "; charset=UTF-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
	}
}

// writeBody writes what follows the header, matching bodyHeaders.
func writeBody(w io.Writer, o Outgoing) error {
	if len(o.Attachments) == 0 {
		if o.HTML != "" {
			return writeAlternative(w, o)
		}
		return writeQP(w, o.Body)
	}
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(boundary(o, "m")); err != nil {
		return err
	}
	var first [][2]string
	if o.HTML != "" {
		first = [][2]string{{"Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": boundary(o, "a")})}}
	} else {
		first = textHeaders("text/plain")
	}
	pw, err := createPart(mw, first)
	if err != nil {
		return err
	}
	if o.HTML != "" {
		err = writeAlternative(pw, o)
	} else {
		err = writeQP(pw, o.Body)
	}
	if err != nil {
		return err
	}
	for _, a := range o.Attachments {
		pw, err := createPart(mw, attachmentHeaders(a))
		if err != nil {
			return err
		}
		if err := writeBase64(pw, a.Data); err != nil {
			return err
		}
	}
	return mw.Close()
}

// writeAlternative writes the multipart/alternative body: text, then HTML.
func writeAlternative(w io.Writer, o Outgoing) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(boundary(o, "a")); err != nil {
		return err
	}
	for _, p := range []struct{ typ, body string }{{"text/plain", o.Body}, {"text/html", o.HTML}} {
		pw, err := createPart(mw, textHeaders(p.typ))
		if err != nil {
			return err
		}
		if err := writeQP(pw, p.body); err != nil {
			return err
		}
	}
	return mw.Close()
}

// attachmentHeaders names the file twice, as mail clients expect: the
// Content-Type "name" and the Content-Disposition "filename" carry the
// plain name, or RFC 2047 encoded-words for a non-ASCII one (what Gmail and
// Outlook read), and "filename*" adds the RFC 2231 form that standard
// parsers (Go's mime.ParseMediaType among them) prefer.
func attachmentHeaders(a Attachment) [][2]string {
	mt, params, _ := mime.ParseMediaType(a.ContentType) // validated by prepare
	plain := isPlainText(a.Name) && !strings.ContainsAny(a.Name, `"\`)
	legacy := a.Name
	if !plain {
		legacy = encodeWords(a.Name)
	}
	params["name"] = legacy
	disp := mime.FormatMediaType("attachment", map[string]string{"filename": legacy})
	if !plain {
		disp += "; filename*=UTF-8''" + rfc2231Escape(a.Name)
	}
	return [][2]string{
		{"Content-Type", mime.FormatMediaType(mt, params)},
		{"Content-Disposition", disp},
		{"Content-Transfer-Encoding", "base64"},
	}
}

// rfc2231Escape percent-encodes all but RFC 2231 attribute-chars.
func rfc2231Escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}

// createPart starts a part whose header fields go through the one header
// encoder (Header): validated and folded like the message's own.
func createPart(mw *multipart.Writer, fields [][2]string) (io.Writer, error) {
	var h Header
	for _, f := range fields {
		h.Structured(f[0], f[1])
	}
	if err := h.Err(); err != nil {
		return nil, err
	}
	mh := textproto.MIMEHeader{}
	for _, f := range h.fields {
		// fold renders "Name: value"; multipart writes "Name: " itself.
		mh[f[0]] = []string{fold(f[0], f[1])[len(f[0])+2:]}
	}
	return mw.CreatePart(mh)
}

// writeBase64 writes data in base64, 76 characters a line (RFC 2045 §6.8),
// encoding a batch of lines at a time into one reused buffer: a 19 MB
// attachment is not held twice more (encoded, then wrapped) on its way.
func writeBase64(w io.Writer, data []byte) error {
	const lineIn = 57 // bytes that encode to one 76-character line
	buf := make([]byte, 0, min(base64Size(len(data)), 1024*(76+2)))
	for len(data) > 0 {
		buf = buf[:0]
		for len(data) > 0 && (len(buf) == 0 || len(buf)+76+2 <= cap(buf)) {
			n := min(lineIn, len(data))
			buf = base64.StdEncoding.AppendEncode(buf, data[:n])
			if data = data[n:]; len(data) > 0 {
				buf = append(buf, "\r\n"...)
			}
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// base64Size is the length writeBase64 writes for n bytes.
func base64Size(n int) int {
	enc := base64.StdEncoding.EncodedLen(n)
	return enc + 2*max(0, (enc-1)/76)
}
