package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// draftView is a stored draft as the approver must see it before send_draft
// may send it: read from the raw RFC 822 bytes Gmail holds (gmail.DraftRaw),
// so what is shown is what drafts.send sends. Whoever wrote the draft (the
// agent through draft_email/update_draft, or anyone with the mailbox) wrote
// these bytes: the parser is bounded and never fails on odd input, it only
// shows less (and says so).
type draftView struct {
	From             string
	To, Cc, Bcc      []string // "Name <addr>" or addr; a header mailgate cannot parse is kept as written
	Subject          string
	Text             string // the text part (or the HTML part as text when there is none)
	TextSHA256       string // of the text part's decoded bytes ("" when there is none)
	HTMLSHA256       string // of the HTML part's decoded bytes ("" when there is none)
	Attachments      []draftFile
	RawSize          int
	RawSHA256        string
	Unreadable       []string // parts mailgate could not decode, described
	reply            bool     // In-Reply-To or References: a reply's draft, which stays in its thread
	textSeen, htmlOK bool
}

type draftFile struct {
	Name, Type string
	Size       int
	SHA256     string
}

// Bounds of the draft parser.
const (
	maxDraftDepth    = 8         // nested multiparts
	maxDraftParts    = 200       // parts in all
	maxDraftTextView = 256 << 10 // text shown in the request (its hash binds all of it)
)

var errDraftTooDeep = errors.New("too many nested parts")

// parseDraft reads raw into a view. Only a message without a readable
// header is an error.
func parseDraft(raw []byte) (*draftView, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the draft is not a readable email: %w", err)
	}
	sum := sha256.Sum256(raw)
	v := &draftView{RawSize: len(raw), RawSHA256: hex.EncodeToString(sum[:])}
	dec := new(mime.WordDecoder)
	header := func(k string) string {
		s := msg.Header.Get(k)
		if d, err := dec.DecodeHeader(s); err == nil {
			s = d
		}
		return headerLine(s)
	}
	v.Subject = header("Subject")
	v.From = header("From")
	v.reply = msg.Header.Get("In-Reply-To") != "" || msg.Header.Get("References") != ""
	for _, f := range []struct {
		key string
		out *[]string
	}{{"To", &v.To}, {"Cc", &v.Cc}, {"Bcc", &v.Bcc}} {
		*f.out = draftAddresses(msg.Header, f.key, header(f.key))
	}
	parts := 0
	if err := v.walk(textHeader(msg.Header), msg.Body, 0, &parts); err != nil {
		v.Unreadable = append(v.Unreadable, err.Error())
	}
	return v, nil
}

// draftAddresses lists a recipient header's addresses, or the header as
// written when it does not parse (Gmail, not mailgate, then decides who
// gets it, and the human sees exactly what is there).
func draftAddresses(h mail.Header, key, decoded string) []string {
	if decoded == "" {
		return nil
	}
	list, err := h.AddressList(key)
	if err != nil {
		return []string{decoded + " (mailgate could not parse this header: check it in Gmail)"}
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.Name != "" {
			out = append(out, headerLine(a.Name)+" <"+a.Address+">")
		} else {
			out = append(out, a.Address)
		}
	}
	return out
}

// partHeader is the little of a part's header the walk needs.
type partHeader interface{ Get(string) string }

type textHeader mail.Header

func (h textHeader) Get(k string) string { return mail.Header(h).Get(k) }

// walk decodes one part: a multipart's children in order, else a leaf.
func (v *draftView) walk(h partHeader, body io.Reader, depth int, parts *int) error {
	*parts++
	if depth > maxDraftDepth || *parts > maxDraftParts {
		return errDraftTooDeep
	}
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		ct, params = "text/plain", nil
	}
	if strings.HasPrefix(ct, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("a %s part ends early: %v", ct, err)
			}
			if err := v.walk(p.Header, p, depth+1, parts); err != nil {
				return err
			}
		}
	}
	data, err := io.ReadAll(decodeTransfer(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		v.Unreadable = append(v.Unreadable, fmt.Sprintf("a %s part could not be decoded (%v)", ct, err))
	}
	v.leaf(h, ct, params, data)
	return nil
}

func decodeTransfer(enc string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// leaf files a decoded part: the first inline text/plain is the text, the
// first inline text/html the HTML part, anything else (or named) an
// attachment.
func (v *draftView) leaf(h partHeader, ct string, params map[string]string, data []byte) {
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if d, err := new(mime.WordDecoder).DecodeHeader(name); err == nil {
		name = d
	}
	inline := disp != "attachment" && name == ""
	sum := sha256.Sum256(data)
	switch {
	case inline && ct == "text/plain" && !v.textSeen:
		v.textSeen, v.Text, v.TextSHA256 = true, strings.ToValidUTF8(string(data), "\uFFFD"), hex.EncodeToString(sum[:])
	case inline && ct == "text/html" && !v.htmlOK:
		v.htmlOK, v.HTMLSHA256 = true, hex.EncodeToString(sum[:])
		if !v.textSeen {
			v.Text = mailmsg.HTMLToText(strings.ToValidUTF8(string(data), "\uFFFD"))
		}
	default:
		if name == "" {
			name = "(unnamed " + ct + " part)"
		}
		v.Attachments = append(v.Attachments, draftFile{Name: headerLine(name), Type: ct, Size: len(data), SHA256: hex.EncodeToString(sum[:])})
	}
}

// recipients counts the draft's recipients (unparsable headers count as one).
func (v *draftView) recipients() int { return len(v.To) + len(v.Cc) + len(v.Bcc) }

// describe is the request's description of the draft: every recipient, the
// subject, what goes besides the text (HTML part, attachments, with their
// SHA-256), the whole message's size and hash, then the text. It is what
// content_sha256 binds, beside the draft's id and content version.
func (v *draftView) describe(draftID, version string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Draft: %s (content version %s)\n", draftID, version)
	fmt.Fprintf(&b, "From: %s\n", orNone(v.From))
	for _, f := range []struct {
		key  string
		list []string
	}{{"To", v.To}, {"Cc", v.Cc}, {"Bcc", v.Bcc}} {
		fmt.Fprintf(&b, "%s: %s\n", f.key, orNone(strings.Join(f.list, ", ")))
	}
	fmt.Fprintf(&b, "Subject: %s\n", v.Subject)
	if v.HTMLSHA256 != "" {
		fmt.Fprintf(&b, "HTML part: yes, it goes too (SHA-256 %s); the text below is the text part\n", v.HTMLSHA256)
	} else {
		b.WriteString("HTML part: none\n")
	}
	if len(v.Attachments) == 0 {
		b.WriteString("Attachments: none\n")
	} else {
		fmt.Fprintf(&b, "Attachments (%d):\n", len(v.Attachments))
		for _, a := range v.Attachments {
			fmt.Fprintf(&b, "- %s (%s, %s, SHA-256 %s)\n", a.Name, a.Type, mailmsg.FormatSize(int64(a.Size)), a.SHA256)
		}
	}
	for _, u := range v.Unreadable {
		fmt.Fprintf(&b, "Not shown: %s; it is sent as Gmail holds it\n", u)
	}
	fmt.Fprintf(&b, "Whole message: %s, SHA-256 %s\n", mailmsg.FormatSize(int64(v.RawSize)), v.RawSHA256)
	text := strings.ReplaceAll(v.Text, "\r\n", "\n") // a lone CR stays, and is warned about
	if len(text) > maxDraftTextView {
		cut := maxDraftTextView
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[… the text goes on for %d more bytes: read it in Gmail; it is bound by the SHA-256 of the whole message above]", len(text)-cut)
	}
	b.WriteString("\n--- text ---\n")
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// headerLine shows a header value on one line with every hidden character
// made visible (the approver must see what is there; nothing is dropped).
func headerLine(s string) string { return warnings.Escape(strings.Join(strings.Fields(s), " ")) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
