package localgmail

import (
	"reflect"
	"slices"
	"testing"

	"google.golang.org/api/gmail/v1"
)

// TestSnapshotRestoreRoundTrip: a mailbox restored from its snapshot
// answers every read as the original did (ids, threads, labels, drafts,
// history ids, Sent), and its next ids follow the original's.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{Now: fixedClock})
	mustInsert(t, s, []byte("From: a@example.com\r\nTo: me@sandbox.local\r\nSubject: Hello\r\nMessage-ID: <h1@example.com>\r\nDate: Mon, 2 Nov 2026 09:00:00 +0000\r\n\r\nHi.\r\n"), "INBOX", "Projects")
	mustInsert(t, s, []byte("From: me@sandbox.local\r\nTo: a@example.com\r\nSubject: Re: Hello\r\nIn-Reply-To: <h1@example.com>\r\nReferences: <h1@example.com>\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n\r\nHi back.\r\n"), "DRAFT")
	sent, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64([]byte("To: b@example.com\r\nSubject: Sent one\r\n\r\nBody.\r\n"))}).Do()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := New(Options{Now: fixedClock})
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	again, err := r.Snapshot()
	if err != nil || string(again) != string(snap) {
		t.Fatalf("the restored mailbox snapshots differently (%v)", err)
	}
	for _, m := range s.st.order {
		want, _ := s.Message(m.id)
		got, ok := r.Message(m.id)
		if !ok || got.ThreadId != want.ThreadId || got.HistoryId != want.HistoryId || got.Raw != want.Raw ||
			!slices.Equal(got.LabelIds, want.LabelIds) || got.InternalDate != want.InternalDate {
			t.Errorf("message %s restored as %+v, want %+v", m.id, got, want)
		}
		if m.draftID != "" {
			if _, ok := r.Draft(m.draftID); !ok {
				t.Errorf("draft %s lost", m.draftID)
			}
		}
	}
	if rs := r.Sent(); len(rs) != 1 || rs[0].Id != sent.Id {
		t.Errorf("Sent restored as %v", rs)
	}
	if id, ok := r.LabelID("Projects"); !ok || id != "Label_1" {
		t.Errorf("user label restored as %q %v", id, ok)
	}
	r.mu.Lock()
	next := r.st.newMessageID(fixedNow)
	r.mu.Unlock()
	if next <= sent.Id {
		t.Errorf("the restored mailbox's next id %s is not after %s", next, sent.Id)
	}
}

// TestSnapshotKnowsEveryField is a tripwire: a field added to the mailbox
// (store) or to a stored message must be kept by Snapshot and Restore, or
// named here as derived (rebuilt from the raw bytes on Restore); otherwise
// the sandbox would lose it on every restart.
func TestSnapshotKnowsEveryField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v     any
		known []string
	}{
		{storedMsg{}, []string{"id", "threadID", "labels", "historyID", "internalDate", "raw", "p", "trashedFromInbox", "draftID"}},
		{store{}, []string{"msgs", "order", "threads", "byMsgID", "labels", "drafts", "sent", "history", "lastID", "labelSeq", "draftSeq", "cfg"}},
	} {
		typ := reflect.TypeOf(c.v)
		for i := range typ.NumField() {
			if name := typ.Field(i).Name; !slices.Contains(c.known, name) {
				t.Errorf("%s.%s is new: keep it in persist.go's snapshot (or say why it is derived) and name it here", typ.Name(), name)
			}
		}
	}
}
