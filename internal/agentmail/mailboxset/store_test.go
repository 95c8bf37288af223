package mailboxset_test

// The set over a real store, engine by engine: SQLite by default, and
// PostgreSQL when MAILGATE_TEST_POSTGRES is set (see storetest), so the
// set's one body of SQL (sql.go) runs on both.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

func open(t *testing.T) *mailboxset.Set {
	t.Helper()
	svc, st := amtest.AgentMailStore(t, storetest.Open(t), agentmail.Options{})
	return mailboxset.New(svc, st.Mailboxes(), "/proj")
}

// TestStoreSendReceive: receive pops the oldest unread message first, once.
func TestStoreSendReceive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := open(t)
	if _, ok, err := m.Receive(ctx, "bob"); ok || err != nil {
		t.Fatalf("receive before any mail: %v %v", ok, err)
	}
	for _, body := range []string{"first\nline two", "second"} {
		if _, err := m.Send(ctx, "alice", "bob", body); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"first\nline two", "second"} {
		got, ok, err := m.Receive(ctx, "bob")
		if err != nil || !ok || got.From != "alice" || got.Message != want {
			t.Fatalf("receive = %+v %v %v, want %q", got, ok, err, want)
		}
	}
	if _, ok, err := m.Receive(ctx, "bob"); ok || err != nil {
		t.Fatalf("receive after both: %v %v", ok, err)
	}
}

// TestStoreStatus: a status is stored; work and offline clear the notified
// mark, ready keeps it.
func TestStoreStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := open(t)
	if _, err := m.State(ctx, "bob"); !errors.Is(err, agentmail.ErrNotFound) {
		t.Fatalf("state before any: %v", err)
	}
	if err := m.SetStatus(ctx, "bob", mailboxset.Ready); err != nil {
		t.Fatal(err)
	}
	if err := m.MarkNotified(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := m.SetStatus(ctx, "bob", mailboxset.Ready); err != nil {
		t.Fatal(err)
	}
	if s, err := m.State(ctx, "bob"); err != nil || s.Status != mailboxset.Ready || s.NotifiedAt.IsZero() {
		t.Fatalf("ready again: %+v %v (the notified mark must stay)", s, err)
	}
	if err := m.SetStatus(ctx, "bob", mailboxset.Work); err != nil {
		t.Fatal(err)
	}
	if s, err := m.State(ctx, "bob"); err != nil || s.Status != mailboxset.Work || !s.NotifiedAt.IsZero() {
		t.Fatalf("work: %+v %v (the notified mark must go)", s, err)
	}
	readers, _, err := m.AgentNames(ctx)
	if err != nil || !slices.Equal(readers, []string{"bob"}) {
		t.Fatalf("agent names = %v %v", readers, err)
	}
}

// TestStoreImportOnce: a second import of the same directory adds nothing,
// and a status set here is kept over the imported one.
func TestStoreImportOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := open(t)
	dir := t.TempDir()
	boxes := filepath.Join(dir, ".agentmail", "mailboxes")
	if err := os.MkdirAll(boxes, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(boxes, "bob.jsonl"), `{"id":"aaaaaaa1","from":"alice","to":"bob","message":"read","read_flag":true,"created_at":"2026-01-14T10:00:00Z"}
{"id":"aaaaaaa2","from":"alice","to":"bob","message":"unread","read_flag":false,"created_at":"2026-01-14T10:01:00Z"}
`)
	write(filepath.Join(dir, ".agentmail", "recipients.jsonl"), `{"recipient":"bob","status":"work","updated_at":"2026-01-14T10:00:00Z","notified_at":"2026-01-14T10:02:00Z"}
{"recipient":"carol","status":"offline","updated_at":"2026-01-14T10:00:00Z"}
`)
	if err := m.SetStatus(ctx, "carol", mailboxset.Ready); err != nil {
		t.Fatal(err)
	}
	exp, err := mailboxset.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Import(ctx, exp)
	if err != nil || res.Imported != 2 || res.Unread != 1 || res.Statuses != 1 {
		t.Fatalf("first import = %+v %v", res, err)
	}
	if res, err = m.Import(ctx, exp); err != nil || res.Imported != 0 || res.Skipped != 2 {
		t.Fatalf("second import = %+v %v", res, err)
	}
	if s, err := m.State(ctx, "bob"); err != nil || s.Status != mailboxset.Work || !s.NotifiedAt.Equal(time.Date(2026, 1, 14, 10, 2, 0, 0, time.UTC)) {
		t.Fatalf("bob's imported state = %+v %v", s, err)
	}
	if s, err := m.State(ctx, "carol"); err != nil || s.Status != mailboxset.Ready {
		t.Fatalf("carol's own state = %+v %v", s, err)
	}
	if got, ok, err := m.Receive(ctx, "bob"); err != nil || !ok || got.Message != "unread" {
		t.Fatalf("receive after import = %+v %v %v", got, ok, err)
	}
}
