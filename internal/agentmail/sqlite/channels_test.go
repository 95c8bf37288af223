package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
)

// TestChannelsMigrationUpgrade: a store created before the compatibility
// sets (0001 only, with mail in it) gets 0002_compat.sql on the next open,
// keeps its mail, and serves both sets at once.
func TestChannelsMigrationUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	db := oldStore(t, path, "0001_init.sql")
	db.Close()

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := amsqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := agentmail.New(st, agentmail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() }) // before the DB's: it stops the indexer
	mb := mailboxset.New(svc, mailboxset.SQLStore(st), dir)
	if _, err := mb.Send(ctx, "alice", "bob", "hello"); err != nil {
		t.Fatal(err)
	}
	ch := channels.New(svc, channels.SQLStore(st), channels.Options{ProjectKey: dir})
	r, err := ch.Register(ctx, "alice", "coder") // the mailbox's alice is free: she acts as that agent
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.SendMessage(ctx, r.AgentID, "", "s", "b"); err != nil {
		t.Fatal(err)
	}
	got, ok, err := mb.Receive(ctx, "bob")
	if err != nil || !ok || got.From != "alice" || got.Message != "hello" {
		t.Fatalf("receive after upgrade = %+v %v %v", got, ok, err)
	}
}
