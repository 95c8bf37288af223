package localgmail

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/mail"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/api/gmail/v1"
)

// The store is the mailbox: messages, threads, labels and drafts. It has no
// lock of its own; Server.mu guards it. Messages are kept in a slice sorted
// newest first, so messages.list is one pass over it.

type storedMsg struct {
	id, threadID string
	labels       []string
	historyID    uint64
	internalDate int64 // ms since the epoch
	raw          []byte
	p            *msgParse // parsed when first needed (mime.go)
	// trashedFromInbox: it was in INBOX when trashed, so untrash puts it back.
	trashedFromInbox bool
	draftID          string // the draft this message is the content of; set before add, never changed
}

func (m *storedMsg) hasLabel(id string) bool {
	return slices.Contains(m.labels, id)
}

// newer orders messages as messages.list returns them.
func (m *storedMsg) newer(o *storedMsg) bool {
	if m.internalDate != o.internalDate {
		return m.internalDate > o.internalDate
	}
	return m.id > o.id
}

type store struct {
	msgs    map[string]*storedMsg
	order   []*storedMsg            // newest first
	threads map[string][]*storedMsg // thread id → messages, insertion order
	byMsgID map[string][]*storedMsg // RFC 5322 Message-ID (bare) → messages
	labels  map[string]*gmail.Label // id → label
	drafts  map[string]*storedMsg   // draft id → its message
	sent    []*storedMsg            // messages.send / drafts.send results, oldest first
	// history is the mailbox historyId, bumped on every change; the changed
	// message takes the new value ("History IDs increase chronologically",
	// users.history.list; Message.historyId: "The ID of the last history
	// record that modified this message").
	history  uint64
	lastID   uint64 // last message id handed out
	labelSeq int    // user label counter (Label_<n>)
	draftSeq uint64
	cfg      settingsState // filters and the vacation responder (settings.go)
}

// systemLabels in the order labels.list returns them, with the visibility
// fields Gmail sets on a few.
var systemLabels = []struct{ id, mlv, llv string }{
	{"CHAT", "hide", "labelHide"}, {"SENT", "", ""}, {"INBOX", "", ""}, {"IMPORTANT", "", ""},
	{"TRASH", "", ""}, {"DRAFT", "", ""}, {"SPAM", "", ""}, {"CATEGORY_FORUMS", "", ""},
	{"CATEGORY_UPDATES", "", ""}, {"CATEGORY_PERSONAL", "", ""}, {"CATEGORY_PROMOTIONS", "", ""},
	{"CATEGORY_SOCIAL", "", ""}, {"STARRED", "", ""}, {"UNREAD", "", ""},
}

func newStore() *store {
	st := &store{
		msgs: map[string]*storedMsg{}, threads: map[string][]*storedMsg{}, byMsgID: map[string][]*storedMsg{},
		labels: map[string]*gmail.Label{}, drafts: map[string]*storedMsg{},
		history: 1000, draftSeq: 2390712476387367000,
	}
	for _, l := range systemLabels {
		st.labels[l.id] = &gmail.Label{Id: l.id, Name: l.id, Type: "system", MessageListVisibility: l.mlv, LabelListVisibility: l.llv}
	}
	return st
}

// newMessageID returns a Gmail-style id: 16 hex digits, the receipt time in
// ms shifted left 20 bits, made strictly increasing so ids are unique and
// sort by arrival.
func (st *store) newMessageID(now time.Time) string {
	ms := min(max(now.UnixMilli(), 0), 1<<44-1) // keep ms<<20 inside 64 bits (year 2527)
	id := uint64(ms) << 20
	if id <= st.lastID {
		id = st.lastID + 1
	}
	st.lastID = id
	return fmt.Sprintf("%016x", id)
}

func (st *store) newDraftID() string {
	st.draftSeq++
	return fmt.Sprintf("r-%d", st.draftSeq)
}

var (
	hexID   = lazyRegexp(`^[0-9a-f]{16}$`)
	draftID = lazyRegexp(`^r-?[0-9]{1,20}$`) // "r" + a signed decimal, as Gmail
)

// add stores m, assigning id and history; threadID "" starts a new thread
// whose id is the message's own.
func (st *store) add(m *storedMsg, now time.Time) {
	if m.id == "" {
		m.id = st.newMessageID(now)
	}
	if m.threadID == "" {
		m.threadID = m.id
	}
	st.history++
	m.historyID = st.history
	st.msgs[m.id] = m
	st.threads[m.threadID] = append(st.threads[m.threadID], m)
	if m.p.messageID != "" {
		st.byMsgID[m.p.messageID] = append(st.byMsgID[m.p.messageID], m)
	}
	i := sort.Search(len(st.order), func(i int) bool { return m.newer(st.order[i]) })
	st.order = append(st.order, nil)
	copy(st.order[i+1:], st.order[i:])
	st.order[i] = m
}

func (st *store) remove(m *storedMsg) {
	delete(st.msgs, m.id)
	st.threads[m.threadID] = without(st.threads[m.threadID], m)
	if len(st.threads[m.threadID]) == 0 {
		delete(st.threads, m.threadID)
	}
	if m.p.messageID != "" {
		st.byMsgID[m.p.messageID] = without(st.byMsgID[m.p.messageID], m)
		if len(st.byMsgID[m.p.messageID]) == 0 {
			delete(st.byMsgID, m.p.messageID)
		}
	}
	st.order = without(st.order, m)
	st.history++
}

func without(list []*storedMsg, m *storedMsg) []*storedMsg {
	out := list[:0]
	for _, x := range list {
		if x != m {
			out = append(out, x)
		}
	}
	return out
}

// explicitThread applies Gmail's rule for send/insert/drafts with a threadId
// ("Managing threads", developers.google.com/workspace/gmail/api/guides/
// threads: "The requested threadId must be specified on the Message …
// The References and In-Reply-To headers must be set in compliance with
// the RFC 2822 standard. The Subject headers must match."; gmail-api.md
// §8): the message joins only when the thread exists, one of
// its In-Reply-To/References ids is the Message-ID of a message in that
// thread, and the subjects match once Re:/Fwd: are stripped. Otherwise it
// silently starts a new thread (returned as ""). ok is false for a threadId
// that names no thread of this mailbox.
func (st *store) explicitThread(p *parsed, threadID string) (tid string, ok bool) {
	if threadID == "" {
		return "", true
	}
	msgs, found := st.threads[threadID]
	if !found || !hexID().MatchString(threadID) {
		return "", false
	}
	refs := map[string]bool{}
	for _, r := range p.refs {
		refs[r] = true
	}
	refHit, subjHit := false, false
	for _, m := range msgs {
		refHit = refHit || (m.p.messageID != "" && refs[m.p.messageID])
		subjHit = subjHit || m.p.get().normSubject == p.normSubject
	}
	if refHit && subjHit {
		return threadID, true
	}
	return "", true
}

// headerThread threads delivered mail (Insert, SeedFS) the way a receiving
// mailbox does: by References/In-Reply-To plus a matching subject, preferring
// the most recent reference.
func (st *store) headerThread(p *parsed) string {
	for i := len(p.refs) - 1; i >= 0; i-- {
		for _, m := range st.byMsgID[p.refs[i]] {
			if m.p.get().normSubject == p.normSubject {
				return m.threadID
			}
		}
	}
	return ""
}

// threadMessages returns a thread's messages in chronological order.
func (st *store) threadMessages(tid string) []*storedMsg {
	msgs := append([]*storedMsg(nil), st.threads[tid]...)
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[j].newer(msgs[i]) })
	return msgs
}

// checkLabelIDs validates labelIds given to insert/list: they must be label ids.
func (st *store) checkLabelIDs(ids []string) error {
	for _, id := range ids {
		if _, ok := st.labels[id]; !ok {
			return apiErr(400, "invalidArgument", "Invalid label: "+id)
		}
	}
	return nil
}

// seedLabel resolves a label for seeding by id or name (any case), creating a
// user label for an unknown name so seed files can use their own labels.
func (st *store) seedLabel(name string) string {
	name = strings.TrimSpace(name)
	if l, ok := st.labels[strings.ToUpper(name)]; ok && l.Type == "system" {
		return l.Id
	}
	if _, ok := st.labels[name]; ok {
		return name
	}
	for _, l := range st.labels {
		if strings.EqualFold(l.Name, name) {
			return l.Id
		}
	}
	l, _ := st.createLabel(&gmail.Label{Name: name})
	return l.Id
}

// reservedLabelNames cannot be used for user labels.
var reservedLabelNames = map[string]bool{
	"inbox": true, "sent": true, "sent mail": true, "draft": true, "drafts": true, "spam": true, "trash": true,
	"bin": true, "unread": true, "starred": true, "important": true, "chat": true, "chats": true,
	"all mail": true, "snoozed": true, "scheduled": true, "outbox": true,
}

func (st *store) createLabel(in *gmail.Label) (*gmail.Label, error) {
	name := strings.TrimSpace(in.Name)
	lower := strings.ToLower(name)
	if name == "" || reservedLabelNames[lower] || strings.HasPrefix(lower, "category_") ||
		strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
		return nil, apiErr(400, "invalidArgument", "Invalid label name")
	}
	for _, l := range st.labels {
		if strings.EqualFold(l.Name, name) {
			return nil, apiErr(409, "duplicate", "Label name exists or conflicts")
		}
	}
	// User labels are "Label_<n>", as every labels.list answer shows (the
	// reference only says "The immutable ID of the label"); names are free.
	st.labelSeq++
	l := &gmail.Label{
		Id: fmt.Sprintf("Label_%d", st.labelSeq), Name: name, Type: "user",
		MessageListVisibility: cmp.Or(in.MessageListVisibility, "show"),
		LabelListVisibility:   cmp.Or(in.LabelListVisibility, "labelShow"),
		Color:                 in.Color,
	}
	st.labels[l.Id] = l
	st.history++
	return l, nil
}

// sortedLabels: system labels in Gmail's order, then user labels by id number.
func (st *store) sortedLabels() []*gmail.Label {
	var out []*gmail.Label
	for _, s := range systemLabels {
		out = append(out, st.labels[s.id])
	}
	var user []*gmail.Label
	for _, l := range st.labels {
		if l.Type == "user" {
			user = append(user, l)
		}
	}
	sort.Slice(user, func(i, j int) bool { return labelNum(user[i].Id) < labelNum(user[j].Id) })
	return append(out, user...)
}

func labelNum(id string) int {
	var n int
	fmt.Sscanf(id, "Label_%d", &n)
	return n
}

// render builds the API view of a message in the given format; inlineMax
// is Options.InlineMax resolved (Server.inlineMax).
func (m *storedMsg) render(format string, metadataHeaders []string, inlineMax int) *gmail.Message {
	out := &gmail.Message{
		Id: m.id, ThreadId: m.threadID, LabelIds: append([]string(nil), m.labels...),
		Snippet: m.p.get().snippet, HistoryId: m.historyID, InternalDate: m.internalDate,
		SizeEstimate: int64(len(m.raw)),
	}
	switch format {
	case "minimal":
	case "metadata":
		out.Payload = &gmail.MessagePart{MimeType: m.p.get().root.mimeType, Headers: cloneHeaders(m.p.get().root.headers, metadataHeaders)}
	case "raw":
		out.Raw = base64.URLEncoding.EncodeToString(m.raw) // padded, as Gmail returns it
	default:
		out.Payload = m.p.get().root.render(m.id, inlineMax)
	}
	return out
}

// gmailMessageID makes a Message-ID in the shape Gmail generates for API
// sends and drafts: <CA…@mail.gmail.com>.
func gmailMessageID() string {
	b := make([]byte, 33)
	rand.Read(b)
	s := strings.NewReplacer("-", "", "_", "").Replace(base64.RawURLEncoding.EncodeToString(b))
	return "<CA" + s + "@mail.gmail.com>"
}

// prepareOutgoing applies what Gmail does to a message it sends or drafts:
// From becomes the mailbox owner (keeping the display name) unless it is
// one of the owner's send-as aliases, a missing Date
// (any Date when freshDate: a draft being sent) or Message-ID is added, and
// the Message-ID is replaced when rewriteID.
func prepareOutgoing(raw []byte, owner string, aliases []string, now time.Time, rewriteID, freshDate bool) []byte {
	hb, body := splitMessage(raw)
	if from := looseAddresses(hb.get("From")); len(from) == 0 {
		hb.set("From", owner)
	} else if !strings.EqualFold(from[0].Address, owner) && !slices.ContainsFunc(aliases, func(a string) bool { return strings.EqualFold(a, from[0].Address) }) {
		hb.set("From", (&mail.Address{Name: from[0].Name, Address: owner}).String())
	}
	if freshDate || !hb.has("Date") {
		hb.set("Date", now.Format(time.RFC1123Z))
	}
	if rewriteID || bareID(hb.get("Message-ID")) == "" {
		hb.set("Message-ID", gmailMessageID())
	}
	return hb.assemble(body)
}

// checkRecipients enforces Gmail's send-time checks on To/Cc/Bcc.
func checkRecipients(p *parsed) error {
	n := 0
	for _, name := range []string{"To", "Cc", "Bcc"} {
		for _, f := range p.hb.fields {
			if !strings.EqualFold(f.name, name) || f.value() == "" {
				continue
			}
			list, err := addrParser.ParseList(f.value())
			if err != nil {
				return apiErr(400, "invalidArgument", "Invalid "+name+" header")
			}
			n += len(list)
		}
	}
	if n == 0 {
		return apiErr(400, "invalidArgument", "Recipient address required")
	}
	return nil
}

// isRecipient reports whether addr is among the message's To/Cc/Bcc.
func (p *parsed) isRecipient(addr string) bool {
	addr = strings.ToLower(addr)
	for _, f := range []addrField{p.to, p.cc, p.bcc} {
		for _, a := range f.addrs {
			if a.email == addr {
				return true
			}
		}
	}
	return false
}
