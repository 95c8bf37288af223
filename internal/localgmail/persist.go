package localgmail

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	sjson "github.com/segmentio/encoding/json"
	"google.golang.org/api/gmail/v1"
)

// Snapshot and Restore let the sandbox keep its mailbox across restarts
// (internal/sandbox): a mailbox that started fresh on every start lost
// what the user had sent, while the vault's Done/ still listed it.
//
// A snapshot holds what cannot be rebuilt: each message's raw bytes, ids,
// labels and dates, the drafts and the Sent list, the user labels and the
// counters ids come from. Everything derived from the raw bytes (parsed
// headers, MIME parts, thread and Message-ID indexes) is rebuilt on
// Restore (each message parsed when first needed, msgParse), so a snapshot
// stays valid when the parsing improves.

// snapshotVersion changes when a snapshot written by an older release
// cannot be read as it is.
const snapshotVersion = 1

type snapshot struct {
	Version  int            `json:"version"`
	Email    string         `json:"email"`
	History  uint64         `json:"history"`
	LastID   uint64         `json:"lastId"`
	LabelSeq int            `json:"labelSeq"`
	DraftSeq uint64         `json:"draftSeq"`
	Labels   []*gmail.Label `json:"labels"`   // user labels
	Messages []snapshotMsg  `json:"messages"` // oldest first
	Sent     []string       `json:"sent"`     // ids of messages.send / drafts.send results, oldest first
	// Filters and Vacation are the settings (settings.go); absent in
	// snapshots written before them.
	Filters   []*gmail.Filter         `json:"filters,omitempty"`
	FilterSeq int                     `json:"filterSeq,omitempty"`
	Vacation  *gmail.VacationSettings `json:"vacation,omitempty"`
	// Forwarding are the forwarding addresses (forwarding.go).
	Forwarding []*gmail.ForwardingAddress `json:"forwarding,omitempty"`
}

type snapshotMsg struct {
	ID               string   `json:"id"`
	ThreadID         string   `json:"threadId"`
	Labels           []string `json:"labels"`
	HistoryID        uint64   `json:"historyId"`
	InternalDate     int64    `json:"internalDate"`
	Raw              []byte   `json:"raw"`
	DraftID          string   `json:"draftId,omitempty"`
	TrashedFromInbox bool     `json:"trashedFromInbox,omitempty"`
}

// Snapshot encodes the whole mailbox as JSON.
func (s *Server) Snapshot() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.st
	snap := snapshot{Version: snapshotVersion, Email: s.o.Email, History: st.history, LastID: st.lastID,
		LabelSeq: st.labelSeq, DraftSeq: st.draftSeq}
	for _, id := range slices.Sorted(maps.Keys(st.labels)) {
		if l := st.labels[id]; l.Type == "user" {
			snap.Labels = append(snap.Labels, l)
		}
	}
	for _, m := range slices.Backward(st.order) {
		snap.Messages = append(snap.Messages, snapshotMsg{ID: m.id, ThreadID: m.threadID, Labels: m.labels, HistoryID: m.historyID,
			InternalDate: m.internalDate, Raw: m.raw, DraftID: m.draftID, TrashedFromInbox: m.trashedFromInbox})
	}
	for _, m := range st.sent {
		snap.Sent = append(snap.Sent, m.id)
	}
	snap.Filters, snap.FilterSeq, snap.Forwarding = st.cfg.filters, st.cfg.filterSeq, st.cfg.forwarding
	if v := st.cfg.vacation; v.EnableAutoReply || v.ResponseSubject != "" || v.ResponseBodyPlainText != "" || v.ResponseBodyHtml != "" {
		snap.Vacation = &v
	}
	return json.Marshal(&snap)
}

// Restore replaces the mailbox with one Snapshot encoded. On error the
// mailbox is left as it was.
func (s *Server) Restore(data []byte) error {
	var snap snapshot
	if err := decodeSnapshot(data, &snap); err != nil {
		return fmt.Errorf("localgmail: reading a mailbox snapshot: %w", err)
	}
	if snap.Version != snapshotVersion {
		return fmt.Errorf("localgmail: mailbox snapshot version %d, this release reads %d", snap.Version, snapshotVersion)
	}
	st := newStore()
	for _, l := range snap.Labels {
		if l == nil || l.Id == "" || l.Type != "user" {
			return fmt.Errorf("localgmail: mailbox snapshot: a user label without an id")
		}
		st.labels[l.Id] = l
	}
	for _, sm := range snap.Messages {
		if sm.ID == "" || st.msgs[sm.ID] != nil {
			return fmt.Errorf("localgmail: mailbox snapshot: message id %q missing or repeated", sm.ID)
		}
		m := &storedMsg{id: sm.ID, threadID: sm.ThreadID, labels: sm.Labels, internalDate: sm.InternalDate,
			raw: sm.Raw, p: parseLater(sm.Raw), draftID: sm.DraftID, trashedFromInbox: sm.TrashedFromInbox}
		st.add(m, s.now())
		m.historyID = sm.HistoryID // add numbered it afresh
		if m.draftID != "" {
			st.drafts[m.draftID] = m
		}
	}
	for _, id := range snap.Sent {
		m := st.msgs[id]
		if m == nil {
			return fmt.Errorf("localgmail: mailbox snapshot: sent message %q is not in the mailbox", id)
		}
		st.sent = append(st.sent, m)
	}
	st.history, st.lastID, st.labelSeq, st.draftSeq = snap.History, snap.LastID, snap.LabelSeq, snap.DraftSeq
	st.cfg.filters, st.cfg.filterSeq, st.cfg.forwarding = snap.Filters, snap.FilterSeq, snap.Forwarding
	if snap.Vacation != nil {
		st.cfg.vacation = *snap.Vacation
	}
	s.mu.Lock()
	s.st = st
	s.mu.Unlock()
	return nil
}

// decodeSnapshot decodes a snapshot with segmentio's decoder (go-sdk's),
// which reads the sandbox mailbox (~90 KB, most of it base64) in a fifth
// of encoding/json's time, at every sandbox start and every reload. What
// it refuses is decoded again by encoding/json, whose result and words
// stand: a broken file is reported as before.
func decodeSnapshot(data []byte, snap *snapshot) error {
	if err := sjson.Unmarshal(data, snap); err == nil {
		return nil
	}
	*snap = snapshot{}
	return json.Unmarshal(data, snap)
}
