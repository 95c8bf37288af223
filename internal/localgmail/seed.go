package localgmail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"google.golang.org/api/gmail/v1"
)

// Seeding and inspection: the Go-side door into the mailbox, for tests and
// for the sandbox's demo mailbox. Seeded mail is treated as delivered mail:
// threaded by its References/In-Reply-To and subject, dated by its Date.

// Insert stores raw (RFC 822 bytes) as a delivered message with the given
// labels and threads it like a receiving mailbox would (gmail-api.md §8).
// Labels may be system ids (any case), user label ids, or user label names;
// an unknown name creates the user label. internalDate comes from the Date
// header (now when absent or unparseable). A message labelled DRAFT becomes
// a draft (every DRAFT message in Gmail belongs to one), listed by
// drafts.list and sendable with drafts.send.
func (s *Server) Insert(raw []byte, labelIDs ...string) (*gmail.Message, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, errors.New("localgmail: empty message")
	}
	raw = append([]byte(nil), raw...)
	p := parseMessage(raw)
	date := p.date
	if date.IsZero() {
		date = s.now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var labels []string
	for _, l := range labelIDs {
		if strings.TrimSpace(l) != "" {
			labels = append(labels, s.st.seedLabel(l))
		}
	}
	m := &storedMsg{threadID: s.st.headerThread(p), labels: dedupe(labels), internalDate: date.UnixMilli(), raw: raw, p: parsedNow(p)}
	if m.hasLabel("DRAFT") {
		m.draftID = s.st.newDraftID()
		s.st.drafts[m.draftID] = m
	}
	s.st.add(m, date) // ids follow the Date, as Gmail's follow receipt time
	return m.render("minimal", nil, 0), nil
}

// SeedFS inserts every *.eml file in dir (in name order). Labels come from an
// optional "X-Sandbox-Labels: INBOX, UNREAD" header, which is removed from the
// stored message; without it a message is in INBOX. CRLF and LF files both
// load.
func (s *Server) SeedFS(fsys fs.FS, dir string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".eml") {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		labels := []string{"INBOX"}
		if hb, body := splitMessage(raw); hb.has("X-Sandbox-Labels") {
			labels = strings.Split(hb.get("X-Sandbox-Labels"), ",")
			hb.del("X-Sandbox-Labels")
			raw = hb.assemble(body)
		}
		if _, err := s.Insert(raw, labels...); err != nil {
			return fmt.Errorf("localgmail: seeding %s: %w", e.Name(), err)
		}
	}
	return nil
}

// full is the test view of a message: format=full plus raw.
func (m *storedMsg) full(inlineMax int) *gmail.Message {
	out := m.render("full", nil, inlineMax)
	out.Raw = base64.URLEncoding.EncodeToString(m.raw)
	return out
}

// Sent returns the messages created by messages.send and drafts.send, oldest
// first, in full format with Raw filled (decode with DecodeRaw, or use
// RawMessage).
func (s *Server) Sent() []*gmail.Message {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*gmail.Message
	for _, m := range s.st.sent {
		out = append(out, m.full(s.inlineMax()))
	}
	return out
}

// Delivery is what the recipients of a sent message receive.
type Delivery struct {
	Recipients []string // every To, Cc and Bcc address, lower case, in header order
	Raw        []byte   // the message as delivered: the sender's copy without its Bcc header
}

// Delivered returns the delivery of a message created by messages.send or
// drafts.send; false for any other id. The sender's own copy (Message,
// RawMessage) keeps Bcc, as Gmail's Sent folder does; recipients never see
// it (RFC 5322 §3.6.3: the Bcc line is removed from the copies sent to the
// To and Cc recipients; Gmail's Sent message shows the sender its Bcc).
func (s *Server) Delivered(id string) (Delivery, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range s.st.sent {
		if m.id != id {
			continue
		}
		var d Delivery
		for _, f := range []addrField{m.p.get().to, m.p.get().cc, m.p.get().bcc} {
			for _, a := range f.addrs {
				d.Recipients = append(d.Recipients, a.email)
			}
		}
		hb, body := splitMessage(m.raw)
		hb.del("Bcc")
		d.Raw = hb.assemble(body)
		return d, true
	}
	return Delivery{}, false
}

// Message returns a stored message in full format with Raw filled.
func (s *Server) Message(id string) (*gmail.Message, bool) {
	return inspect(s, func(st *store) *storedMsg { return st.msgs[id] }, func(m *storedMsg) *gmail.Message { return m.full(s.inlineMax()) })
}

// RawMessage returns a copy of the stored RFC 822 bytes of message id.
func (s *Server) RawMessage(id string) ([]byte, bool) {
	return inspect(s, func(st *store) *storedMsg { return st.msgs[id] }, func(m *storedMsg) []byte { return bytes.Clone(m.raw) })
}

// Labels returns the label ids of message id, sorted.
func (s *Server) Labels(id string) ([]string, bool) {
	return inspect(s, func(st *store) *storedMsg { return st.msgs[id] }, func(m *storedMsg) []string {
		return slices.Sorted(slices.Values(m.labels))
	})
}

// Draft returns a draft (its message in full format with Raw), or false
// once it was sent or deleted.
func (s *Server) Draft(id string) (*gmail.Draft, bool) {
	return inspect(s, func(st *store) *storedMsg { return st.drafts[id] }, func(m *storedMsg) *gmail.Draft {
		return &gmail.Draft{Id: id, Message: m.full(s.inlineMax())}
	})
}

// inspect finds a message with find and returns view of it, both under the
// read lock (false when find returns nil).
func inspect[T any](s *Server, find func(*store) *storedMsg, view func(*storedMsg) T) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var zero T
	m := find(s.st)
	if m == nil {
		return zero, false
	}
	return view(m), true
}

// LabelID resolves a label name (any case) or id to its id.
func (s *Server) LabelID(name string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.st.labels[name]; ok {
		return name, true
	}
	for _, l := range s.st.labels {
		if strings.EqualFold(l.Name, name) {
			return l.Id, true
		}
	}
	return "", false
}
