package localgmail

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"mime"
	"mime/multipart"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/api/gmail/v1"
)

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("messages.list", 5, (*Server).listMessages)
	handle("messages.insert", 25, (*Server).insertMessage)
	handle("messages.send", 100, (*Server).sendMessage)
	handle("messages.get", 5, (*Server).getMessage)
	handle("messages.attachments.get", 5, (*Server).getAttachment)
	handle("threads.get", 10, (*Server).getThread)
}

// The Gmail operations. Each handler validates its input the way Gmail does
// (so the client sees the same 400s), then works on the store under s.mu.

// The upload limits are the discovery document's mediaUpload.maxSize of
// each method (gmail-api.json; TestUploadSizeLimits reads them from it).
const (
	maxSendSize   = 36_700_160 // 35 MB: messages.send / drafts
	maxInsertSize = 150 << 20  // messages.insert
	maxBodyBytes  = 210 << 20  // room for base64 of the largest insert
)

func invalidID() error { return apiErr(400, "invalidArgument", "Invalid id value") }
func notFound() error  { return apiErr(404, "notFound", "Requested entity was not found.") }

// format reads ?format=, allowing raw only where Gmail does, and enforces
// the gmail.metadata restriction.
func (c *call) format(allowRaw bool) (string, error) {
	f := strings.ToLower(c.query("format"))
	switch f {
	case "":
		f = "full"
	case "full", "metadata", "minimal":
	case "raw":
		if !allowRaw {
			return "", apiErr(400, "invalidArgument", "Invalid format: RAW is not supported for this request")
		}
	default:
		return "", apiErr(400, "invalidArgument", fmt.Sprintf("Invalid value at 'format' (type.googleapis.com/google.apps.gmail.v1.Format), %q", c.query("format")))
	}
	if c.meta && (f == "full" || f == "raw") {
		return "", apiErr(403, "forbidden", "Metadata scope doesn't allow format "+strings.ToUpper(f))
	}
	return f, nil
}

// metadataHeaders accepts the repeated parameter (and, leniently, commas).
func (c *call) metadataHeaders() []string {
	var out []string
	for _, v := range c.r.URL.Query()["metadataHeaders"] {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}

// readBody decodes the JSON request into target. On /upload/ URLs it also
// returns the message bytes sent as media (uploadType=multipart or media).
func (c *call) readBody(target any) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(c.r.Body, maxBodyBytes))
	if err != nil {
		return nil, apiErr(400, "badRequest", "Could not read the request body")
	}
	var meta, media []byte
	switch {
	case !c.upload:
		meta = body
	case c.query("uploadType") == "media":
		media = body
	case c.query("uploadType") == "multipart":
		_, params, err := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
		if err != nil || params["boundary"] == "" {
			return nil, apiErr(400, "badRequest", "Invalid multipart request: missing boundary")
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for i := 0; i < 2; i++ {
			p, err := mr.NextPart()
			if err != nil {
				return nil, apiErr(400, "badRequest", "Invalid multipart request with 0 mime parts.")
			}
			b, _ := io.ReadAll(p)
			if i == 0 {
				meta = b
			} else {
				media = b
			}
		}
	default:
		return nil, apiErr(400, "badRequest", fmt.Sprintf("localgmail: uploadType=%q is not supported (use multipart or media)", c.query("uploadType")))
	}
	if len(bytes.TrimSpace(meta)) > 0 {
		if err := json.Unmarshal(meta, target); err != nil {
			return nil, apiErr(400, "badRequest", "Invalid JSON payload received. "+err.Error())
		}
	}
	return media, nil
}

// decodeRaw accepts padded or unpadded base64url, and rejects standard
// base64 the way Gmail does.
func decodeRaw(s string) ([]byte, error) {
	if s == "" {
		return nil, apiErr(400, "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required")
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || strings.ContainsAny(s, "+/") {
		shown := s
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return nil, apiErr(400, "invalidArgument", "Invalid value for ByteString: "+shown)
	}
	return b, nil
}

// DecodeRaw decodes a Message.Raw value (padded or unpadded base64url).
func DecodeRaw(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func messageBytes(media []byte, m *gmail.Message, limit int) ([]byte, error) {
	raw := media
	if raw == nil {
		r := ""
		if m != nil {
			r = m.Raw
		}
		var err error
		if raw, err = decodeRaw(r); err != nil {
			return nil, err
		}
	}
	if len(raw) > limit {
		return nil, apiErr(400, "badRequest", fmt.Sprintf("Request payload size exceeds the limit: %d bytes.", limit))
	}
	return raw, nil
}

func ref(m *storedMsg) *gmail.Message {
	return &gmail.Message{Id: m.id, ThreadId: m.threadID, LabelIds: append([]string(nil), m.labels...)}
}

// ---- messages ----

func (s *Server) listMessages(c *call) (any, error) {
	if c.meta && c.query("q") != "" {
		return nil, apiErr(403, "forbidden", "Metadata scope does not support 'q' parameter")
	}
	page, next, total, err := s.list(c, c.r.URL.Query()["labelIds"], nil)
	if err != nil {
		return nil, err
	}
	// Ids only: "each message resource contains only an id and a threadId.
	// Additional message details can be fetched using the messages.get
	// method" (developers.google.com/workspace/gmail/api/reference/rest/v1/
	// users.messages/list); resultSizeEstimate always, nextPageToken until
	// the last page.
	resp := &gmail.ListMessagesResponse{ResultSizeEstimate: total, NextPageToken: next, ForceSendFields: []string{"ResultSizeEstimate"}}
	for _, m := range page {
		resp.Messages = append(resp.Messages, &gmail.Message{Id: m.id, ThreadId: m.threadID})
	}
	return resp, nil
}

// list runs the search of messages.list and drafts.list (q, labelIds,
// includeSpamTrash, then keep when not nil) and cuts the requested page.
// total is every match, Gmail's resultSizeEstimate (exact here). The
// page's id, threadId and draftID never change, so they may be read after
// the lock is released.
func (s *Server) list(c *call, labelIDs []string, keep func(*storedMsg) bool) (page []*storedMsg, next string, total int64, err error) {
	pg, err := c.pager()
	if err != nil {
		return nil, "", 0, err
	}
	query := parseQuery(c.query("q"), s.now())
	s.mu.RLock()
	defer s.mu.RUnlock()
	matches := s.searchLocked(query, labelIDs, pg.incl)
	if keep != nil {
		matches = slices.DeleteFunc(matches, func(m *storedMsg) bool { return !keep(m) })
	}
	page, next = pg.page(matches)
	return page, next, int64(len(matches)), nil
}

// pager is the paging of messages.list and drafts.list: maxResults
// (default 100, at most 500) and an opaque pageToken tied to the query.
type pager struct {
	max     int
	incl    bool   // includeSpamTrash
	key     string // hash of the query parameters a token belongs to
	start   int64  // resume after this internalDate and id; -1 from the top
	startID string
}

// pager reads maxResults, includeSpamTrash and pageToken. A token from
// another query (or another list method) is refused as Gmail does.
func (c *call) pager() (*pager, error) {
	q := c.r.URL.Query()
	pg := &pager{max: 100, start: -1}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, apiErr(400, "invalidArgument", fmt.Sprintf("Invalid value at 'max_results' (TYPE_UINT32), %q", v))
		}
		if n > 0 {
			pg.max = min(n, 500)
		}
	}
	pg.incl, _ = strconv.ParseBool(q.Get("includeSpamTrash"))
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%q|%q|%v", c.op, q.Get("q"), q["labelIds"], pg.incl)
	pg.key = strconv.FormatUint(h.Sum64(), 36)
	if tok := q.Get("pageToken"); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		parts := strings.Split(string(b), ":")
		if err != nil || len(parts) != 3 || parts[0] != pg.key {
			return nil, apiErr(400, "invalidArgument", "Invalid pageToken")
		}
		pg.start, _ = strconv.ParseInt(parts[1], 10, 64)
		pg.startID = parts[2]
	}
	return pg, nil
}

// page cuts one page out of matches (newest first) and returns the token
// of the next, "" on the last page. The token is a cursor, not an offset,
// so mail arriving between pages does not shift or repeat results.
func (pg *pager) page(matches []*storedMsg) ([]*storedMsg, string) {
	from := 0
	if pg.start >= 0 {
		from = sort.Search(len(matches), func(i int) bool {
			m := matches[i]
			return m.internalDate < pg.start || (m.internalDate == pg.start && m.id < pg.startID)
		})
	}
	end := min(from+pg.max, len(matches))
	if end == len(matches) {
		return matches[from:end], ""
	}
	last := matches[end-1]
	return matches[from:end], base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%s:%d:%s", pg.key, last.internalDate, last.id)))
}

// searchLocked returns matching messages, newest first. SPAM and TRASH are
// left out unless asked for by parameter, labelIds or the query itself.
func (s *Server) searchLocked(q *query, labelIDs []string, includeSpamTrash bool) []*storedMsg {
	env := &evalEnv{owner: s.o.Email, labelNorm: map[string]string{}}
	for id, l := range s.st.labels {
		env.labelNorm[id] = normLabel(l.Name)
	}
	excl := !includeSpamTrash && !q.spamTrash
	for _, id := range labelIDs {
		excl = excl && id != "SPAM" && id != "TRASH"
	}
	var out []*storedMsg
next:
	for _, m := range s.st.order {
		if excl && (m.hasLabel("SPAM") || m.hasLabel("TRASH")) {
			continue
		}
		for _, id := range labelIDs {
			if !m.hasLabel(id) {
				continue next
			}
		}
		if q.root.match(m, env) {
			out = append(out, m)
		}
	}
	return out
}

func (s *Server) getMessage(c *call) (any, error) {
	format, err := c.format(true)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, err := s.st.message(c.params["id"])
	if err != nil {
		return nil, err
	}
	return m.render(format, c.metadataHeaders(), s.inlineMax()), nil
}

func (s *Server) getAttachment(c *call) (any, error) {
	mid := c.params["messageId"]
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, err := s.st.message(mid)
	if err != nil {
		return nil, err
	}
	owner, partID, ok := parseAttachmentID(c.params["id"])
	var pt *part
	if ok && owner == mid {
		pt = m.p.get().root.find(partID)
	}
	if pt == nil || pt.parts != nil {
		return nil, apiErr(400, "invalidArgument", "Invalid attachment token")
	}
	return &gmail.MessagePartBody{AttachmentId: c.params["id"], Size: int64(len(pt.data)),
		Data: base64.RawURLEncoding.EncodeToString(pt.data), ForceSendFields: []string{"Size"}}, nil
}

// messageBody reads the Message of messages.insert or messages.send and
// its bytes (raw, or a media upload), refusing more than limit bytes.
func (c *call) messageBody(limit int) (*gmail.Message, []byte, error) {
	var in gmail.Message
	media, err := c.readBody(&in)
	if err != nil {
		return nil, nil, err
	}
	raw, err := messageBytes(media, &in, limit)
	return &in, raw, err
}

func (s *Server) insertMessage(c *call) (any, error) {
	in, raw, err := c.messageBody(maxInsertSize)
	if err != nil {
		return nil, err
	}
	src := c.query("internalDateSource")
	if src != "" && src != "receivedTime" && src != "dateHeader" {
		return nil, apiErr(400, "invalidArgument", fmt.Sprintf("Invalid value at 'internal_date_source', %q", src))
	}
	p := parseMessage(raw)
	now := s.now()
	date := now
	if src == "dateHeader" && !p.date.IsZero() {
		date = p.date
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.checkLabelIDs(in.LabelIds); err != nil {
		return nil, err
	}
	tid, ok := s.st.explicitThread(p, in.ThreadId)
	if !ok {
		return nil, apiErr(400, "invalidArgument", "Invalid thread_id value")
	}
	m := &storedMsg{threadID: tid, labels: dedupe(in.LabelIds), internalDate: date.UnixMilli(), raw: raw, p: parsedNow(p)}
	s.st.add(m, now)
	return ref(m), nil
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (s *Server) sendMessage(c *call) (any, error) {
	in, raw, err := c.messageBody(maxSendSize)
	if err != nil {
		return nil, err
	}
	if err := checkRecipients(parseMessage(raw)); err != nil {
		return nil, err
	}
	now := s.now()
	raw = prepareOutgoing(raw, s.o.Email, s.o.Aliases, now, s.o.RewriteMessageID, false)
	p := parseMessage(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	tid, ok := s.st.explicitThread(p, in.ThreadId)
	if !ok {
		return nil, apiErr(400, "invalidArgument", "Invalid thread_id value")
	}
	m := &storedMsg{threadID: tid, labels: sentLabels(p, s.o.Email), internalDate: now.UnixMilli(), raw: raw, p: parsedNow(p)}
	s.st.add(m, now)
	s.st.sent = append(s.st.sent, m)
	return ref(m), nil
}

// sentLabels: a message to oneself also lands in the inbox.
func sentLabels(p *parsed, owner string) []string {
	if p.isRecipient(owner) {
		return []string{"SENT", "INBOX"}
	}
	return []string{"SENT"}
}

// getThread is users.threads.get (developers.google.com/workspace/gmail/api/
// reference/rest/v1/users.threads/get): the thread's messages in the
// format asked (raw is refused), oldest first, the thread's historyId its
// latest message's.
func (s *Server) getThread(c *call) (any, error) {
	id := c.params["id"]
	format, err := c.format(false)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	msgs, err := s.st.thread(id)
	if err != nil {
		return nil, err
	}
	t := &gmail.Thread{Id: id}
	for _, m := range msgs {
		t.HistoryId = max(t.HistoryId, m.historyID)
		t.Messages = append(t.Messages, m.render(format, c.metadataHeaders(), s.inlineMax()))
	}
	return t, nil
}
