package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// Every connection of the store has its settings, the first (checked
// before it got them, sqliteConnector) and the ones the pool opens later.
func TestEveryConnectionHasTheStoreSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := openTemp(t)
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.SetMaxOpenConns(1)
	if _, err := other.ExecContext(ctx, "SELECT count(*) FROM schema_migrations"); err != nil {
		t.Fatal(err)
	}
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 3 { // held at once: the pool opens two more
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		for _, want := range []struct{ pragma, value string }{
			{"busy_timeout", "30000"}, {"foreign_keys", "1"}, {"journal_mode", "wal"}, {"synchronous", "1"},
		} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+want.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want.value {
				t.Errorf("connection %d: PRAGMA %s = %s, want %s", i, want.pragma, got, want.value)
			}
		}
		// BEGIN IMMEDIATE (_txlock): the write lock from the start, so
		// another process cannot begin a write transaction beside it.
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); !IsBusy(err) {
			if err == nil {
				other.ExecContext(ctx, "ROLLBACK")
			}
			t.Errorf("connection %d: a transaction did not take the write lock at BEGIN (another's BEGIN IMMEDIATE: %v)", i, err)
		}
		tx.Rollback()
	}
}

// openTemp opens a new SQLite store in a temporary folder, closed when the
// test ends, and returns it with its path.
func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}
