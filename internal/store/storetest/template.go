package storetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mailgate/mailgate/internal/store"
)

// Template is a SQLite store that a package's migrations ran on once per
// test process; each test gets a copy of its file. A new store costs its
// creation and every component's migrations (on SQLite ~10-20 ms of CPU
// each), and a package's tests open dozens. For tests of what runs on the
// schema, not of the migrations themselves: opening a component on a copy
// runs its migrations' check, which finds every one applied.
type Template struct {
	migrate func(ctx context.Context, db *store.DB) error
	file    func() ([]byte, error)
}

// NewTemplate returns the template of a store that migrate ran on. migrate
// is called once, on the first copy asked for.
func NewTemplate(migrate func(ctx context.Context, db *store.DB) error) *Template {
	t := &Template{migrate: migrate}
	t.file = sync.OnceValues(t.build)
	return t
}

// DSN is DSN for a store the template's migrations have already run on:
// on SQLite a copy of the template (see SQLite), on PostgreSQL a new
// schema, migrated when the components open it.
func (t *Template) DSN(tb testing.TB) string {
	tb.Helper()
	if PostgresURL() != "" {
		return DSN(tb)
	}
	return t.SQLite(tb)
}

// SQLite is the path of a copy of the migrated SQLite store, whatever the
// engine of the run, for tests of the SQLite engine itself.
func (t *Template) SQLite(tb testing.TB) string {
	tb.Helper()
	b, err := t.file()
	if err != nil {
		tb.Fatalf("storetest: migrated store: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "state.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// build makes the template's file: a new store, migrated, with everything
// checkpointed into its main file so that the file alone is the store.
func (t *Template) build() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	path := filepath.Join(dir, "state.db")
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	err = t.migrate(ctx, db)
	if err == nil {
		_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, errors.New("the template's WAL was not checkpointed")
	}
	return os.ReadFile(path)
}
