package localgmail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/gmail/v1"
)

// Messages are parsed once, when stored: the part tree for format=full, the
// decoded headers, the text used for snippets, and the token fields search
// runs on. Parsing never fails: like Gmail, the server stores whatever bytes it
// is given and makes the best sense of them it can.

// part is one node of the MIME tree with its body already transfer-decoded.
type part struct {
	partID, mimeType, filename string
	charset                    string
	headers                    []*gmail.MessagePartHeader
	data                       []byte
	attachment                 bool
	parts                      []*part
}

// parsed is everything derived from a message's bytes.
type parsed struct {
	hb          headerBlock
	body        []byte
	root        *part
	subject     string
	normSubject string
	messageID   string   // without angle brackets
	refs        []string // In-Reply-To then References ids, for threading
	date        time.Time
	text        string
	snippet     string
	filenames   []string
	from        addrField
	to, cc, bcc addrField
	subjF       tokenField
	bodyF       tokenField
	fileF       tokenField
	all         map[string]struct{} // union of every token, for single free words
}

// msgParse is a stored message's parse, made when first needed: a
// mailbox restored from a snapshot (persist.go) parses none of its
// messages at once (parsing the sandbox mailbox was 15% of a sandbox
// server's start, which may answer no search at all). Its Message-ID,
// which the store indexes, is read at once.
type msgParse struct {
	messageID string         // the parse's messageID, known before it
	get       func() *parsed // the parse; readers call it under the server's read lock, so more than one at a time
}

// parsedNow is the msgParse of a message already parsed.
func parsedNow(p *parsed) *msgParse {
	return &msgParse{messageID: p.messageID, get: func() *parsed { return p }}
}

// parseLater is the msgParse of raw, parsed on the first get.
func parseLater(raw []byte) *msgParse {
	hb, _ := splitMessage(raw)
	return &msgParse{messageID: bareID(hb.get("Message-ID")), get: sync.OnceValue(func() *parsed { return parseMessage(raw) })}
}

func parseMessage(raw []byte) *parsed {
	hb, body := splitMessage(raw)
	p := &parsed{hb: hb, body: body}
	hdrs := make([]*gmail.MessagePartHeader, 0, len(hb.fields))
	for _, f := range hb.fields {
		hdrs = append(hdrs, &gmail.MessagePartHeader{Name: f.name, Value: decodeHeader(f.value())})
	}
	p.root = parsePart(hdrs, body, "", 0)
	p.subject = decodeHeader(hb.get("Subject"))
	p.normSubject = normalizeSubject(p.subject)
	p.messageID = bareID(hb.get("Message-ID"))
	p.refs = append(msgIDList(hb.get("In-Reply-To")), msgIDList(hb.get("References"))...)
	if d, err := mail.ParseDate(hb.get("Date")); err == nil {
		p.date = d
	}
	var plain, htmls []string
	p.root.walk(func(pt *part) {
		if pt.filename != "" {
			p.filenames = append(p.filenames, pt.filename)
		}
		if pt.attachment {
			return
		}
		switch pt.mimeType {
		case "text/plain":
			plain = append(plain, toUTF8(pt.data, pt.charset))
		case "text/html":
			htmls = append(htmls, htmlToText(toUTF8(pt.data, pt.charset)))
		}
	})
	if len(plain) == 0 {
		plain = htmls // HTML-only mail is indexed through its text
	}
	p.text = strings.Join(plain, "\n")
	p.snippet = makeSnippet(p.text)
	p.from = newAddrField(hb.get("From"))
	p.to = newAddrField(hb.get("To"))
	p.cc = newAddrField(hb.get("Cc"))
	p.bcc = newAddrField(hb.get("Bcc"))
	p.subjF = newTokenField(p.subject)
	p.bodyF = newTokenField(p.text)
	p.fileF = newTokenField(p.filenames...)
	p.all = map[string]struct{}{}
	for _, f := range []tokenField{p.subjF, p.bodyF, p.fileF, p.from.tokenField, p.to.tokenField, p.cc.tokenField, p.bcc.tokenField} {
		for t := range f.set {
			p.all[t] = struct{}{}
		}
	}
	return p
}

func (pt *part) walk(fn func(*part)) {
	fn(pt)
	for _, c := range pt.parts {
		c.walk(fn)
	}
}

const maxMIMEDepth = 20

func parsePart(hdrs []*gmail.MessagePartHeader, body []byte, partID string, depth int) *part {
	pt := &part{partID: partID, headers: hdrs}
	ct := headerValue(hdrs, "Content-Type")
	mediaType, params, err := mime.ParseMediaType(ct)
	if ct == "" || mediaType == "" || (err != nil && err != mime.ErrInvalidMediaParameter) {
		mediaType, params = "text/plain", map[string]string{}
	}
	pt.mimeType = mediaType
	pt.charset = params["charset"]
	if strings.HasPrefix(mediaType, "multipart/") && params["boundary"] != "" && depth < maxMIMEDepth {
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for i := 0; ; i++ {
			mp, err := mr.NextRawPart()
			if err != nil {
				break
			}
			data, err := io.ReadAll(mp)
			id := fmt.Sprint(i)
			if partID != "" {
				id = partID + "." + id
			}
			pt.parts = append(pt.parts, parsePart(orderedHeaders(mp.Header), data, id, depth+1))
			if err != nil {
				break
			}
		}
		return pt
	}
	pt.data = decodeTransfer(body, headerValue(hdrs, "Content-Transfer-Encoding"))
	if _, dp, err := mime.ParseMediaType(headerValue(hdrs, "Content-Disposition")); err == nil || dp != nil {
		pt.filename = dp["filename"]
	}
	if pt.filename == "" {
		pt.filename = params["name"]
	}
	pt.filename = decodeHeader(pt.filename)
	// Named parts and non-text leaves (inline images) are attachments: Gmail
	// stores them apart and gives an attachmentId, unless they are small
	// (render decides, see Options.InlineMax).
	pt.attachment = pt.filename != "" || !(strings.HasPrefix(mediaType, "text/") || mediaType == "message/rfc822")
	return pt
}

// orderedHeaders turns a multipart part's canonicalised map back into a list.
// mime/multipart loses the original order and case; this puts the usual MIME
// fields first so output is stable.
func orderedHeaders(h textproto.MIMEHeader) []*gmail.MessagePartHeader {
	rank := map[string]int{"Content-Type": 0, "Content-Transfer-Encoding": 1, "Content-Disposition": 2, "Content-Id": 3}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, iok := rank[keys[i]]
		rj, jok := rank[keys[j]]
		if iok != jok {
			return iok
		}
		if iok {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	var out []*gmail.MessagePartHeader
	for _, k := range keys {
		name := k
		if k == "Content-Id" {
			name = "Content-ID"
		}
		for _, v := range h[k] {
			out = append(out, &gmail.MessagePartHeader{Name: name, Value: decodeHeader(strings.TrimSpace(v))})
		}
	}
	return out
}

func headerValue(hdrs []*gmail.MessagePartHeader, name string) string {
	for _, h := range hdrs {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// decodeTransfer undoes base64 / quoted-printable, keeping whatever decodes
// when the encoding is damaged.
func decodeTransfer(body []byte, cte string) []byte {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		clean := bytes.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' {
				return r
			}
			return -1
		}, body)
		out, _ := io.ReadAll(base64.NewDecoder(base64.RawStdEncoding, bytes.NewReader(clean)))
		return out
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		if err != nil && len(out) == 0 {
			return body
		}
		return out
	}
	return body
}

var wordDecoder = &mime.WordDecoder{CharsetReader: func(charset string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "windows-1252", "cp1252", "iso-8859-15", "us-ascii", "utf-8":
		b, err := io.ReadAll(in)
		return strings.NewReader(toUTF8(b, charset)), err
	}
	return nil, fmt.Errorf("unsupported charset %q", charset)
}}

// decodeHeader decodes RFC 2047 encoded words; values Gmail shows in
// payload.headers are decoded the same way. Undecodable input is kept as is.
func decodeHeader(v string) string {
	if !strings.Contains(v, "=?") {
		return v
	}
	d, err := wordDecoder.DecodeHeader(v)
	if err != nil {
		return v
	}
	return d
}

// normalizeSubject strips reply/forward prefixes for thread matching.
func normalizeSubject(s string) string {
	s = strings.TrimSpace(s)
	for {
		cut := 0
		for _, p := range []string{"re:", "fwd:", "fw:"} {
			if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
				cut = len(p)
			}
		}
		if cut == 0 {
			break
		}
		s = strings.TrimSpace(s[cut:])
	}
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

func bareID(v string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "<>"))
}

// msgIDList extracts "<a@b> <c@d>" style lists (also tolerating missing
// brackets).
func msgIDList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }) {
		for _, piece := range strings.Split(strings.ReplaceAll(f, "><", ">\x00<"), "\x00") {
			if id := bareID(piece); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// render builds the Gmail payload for format=full. An attachment larger
// than inlineMax bytes gets a fresh attachmentId (attachmentID); a smaller
// one, like every text body, comes inline in body.data.
func (pt *part) render(msgID string, inlineMax int) *gmail.MessagePart {
	mp := &gmail.MessagePart{
		PartId: pt.partID, MimeType: pt.mimeType, Filename: pt.filename,
		Headers:         cloneHeaders(pt.headers, nil),
		ForceSendFields: []string{"PartId", "Filename"}, // Gmail sends "partId":"" and "filename":""
		Body:            &gmail.MessagePartBody{Size: int64(len(pt.data)), ForceSendFields: []string{"Size"}},
	}
	switch {
	case strings.HasPrefix(pt.mimeType, "multipart/") && pt.data == nil:
	case pt.attachment && len(pt.data) > inlineMax:
		mp.Body.AttachmentId = attachmentID(msgID, pt.partID)
	case len(pt.data) > 0:
		// MessagePartBody.data: "the entire content of the message part body"
		// when attachmentId is absent (developers.google.com/workspace/gmail/
		// api/reference/rest/v1/users.messages.attachments#MessagePartBody).
		// Gmail does this for small attachments too, a documented surprise for
		// clients that expect an id on every file (relaticle/relaticle PR
		// #668: "Gmail inlines small attachments as body bytes with no
		// attachment ID"); the cut-off is not published.
		mp.Body.Data = base64.RawURLEncoding.EncodeToString(pt.data)
	}
	for _, c := range pt.parts {
		mp.Parts = append(mp.Parts, c.render(msgID, inlineMax))
	}
	return mp
}

func (pt *part) find(partID string) *part {
	var found *part
	pt.walk(func(c *part) {
		if found == nil && c.partID == partID {
			found = c
		}
	})
	return found
}

// cloneHeaders copies headers, keeping only names in want (any case) when
// want is non-empty; output keeps the message's own order and spelling.
func cloneHeaders(hdrs []*gmail.MessagePartHeader, want []string) []*gmail.MessagePartHeader {
	var out []*gmail.MessagePartHeader
	for _, h := range hdrs {
		keep := len(want) == 0
		for _, w := range want {
			keep = keep || strings.EqualFold(h.Name, w)
		}
		if keep {
			out = append(out, &gmail.MessagePartHeader{Name: h.Name, Value: h.Value})
		}
	}
	return out
}

// attachmentSeq makes every attachmentId handed out distinct.
var attachmentSeq atomic.Uint64

// attachmentID is opaque to clients; it encodes where the part lives plus a
// serial number, so the same part gets a new id on every read and every id
// ever given stays usable. That is what Gmail does ("ephemeral attachment
// ids"): taylorwilsdon/google_workspace_mcp PR #237, "Gmail attachment IDs
// are ephemeral and change between API calls for the same message … If we
// refetch the message to get metadata, the new attachment IDs won't match
// the original ID parameter, causing downloads to fail." A client must use
// the ids of the read it holds, never look an older id up in a new read.
func attachmentID(msgID, partID string) string {
	n := attachmentSeq.Add(1)
	return "ANGjdJ" + base64.RawURLEncoding.EncodeToString([]byte(msgID+":"+partID+":"+strconv.FormatUint(n, 10)))
}

func parseAttachmentID(aid string) (msgID, partID string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(aid, "ANGjdJ"))
	if err != nil || !strings.HasPrefix(aid, "ANGjdJ") {
		return "", "", false
	}
	f := strings.Split(string(b), ":")
	if len(f) != 3 {
		return "", "", false
	}
	if _, err := strconv.ParseUint(f[2], 10, 64); err != nil {
		return "", "", false
	}
	return f[0], f[1], true
}

// addrInfo is one address, folded for matching.
type addrInfo struct{ name, email, local, domain string }

type addrField struct {
	tokenField
	addrs []addrInfo
}

func newAddrField(v string) addrField {
	var texts []string
	var infos []addrInfo
	for _, a := range looseAddresses(v) {
		email := strings.ToLower(a.Address)
		local, domain, _ := strings.Cut(email, "@")
		infos = append(infos, addrInfo{name: foldWord(a.Name), email: email, local: local, domain: domain})
		texts = append(texts, a.Name+" "+a.Address)
	}
	if len(infos) == 0 && strings.TrimSpace(v) != "" {
		texts = append(texts, decodeHeader(v))
	}
	return addrField{tokenField: newTokenField(texts...), addrs: infos}
}

var addrParser = &mail.AddressParser{WordDecoder: wordDecoder}

// looseAddresses parses an address list for indexing, salvaging what it can
// from malformed lists.
func looseAddresses(v string) []*mail.Address {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	if list, err := addrParser.ParseList(v); err == nil {
		return list
	}
	var out []*mail.Address
	for _, piece := range strings.Split(v, ",") {
		if a, err := addrParser.Parse(piece); err == nil {
			out = append(out, a)
		} else if f := strings.Fields(strings.Trim(piece, " <>\"")); len(f) > 0 && strings.Contains(f[len(f)-1], "@") {
			out = append(out, &mail.Address{Address: strings.Trim(f[len(f)-1], "<>")})
		}
	}
	return out
}
