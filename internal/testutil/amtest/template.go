package amtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// DB opens a new store that already holds the agent-mail schema (see
// DSN), closed when the test ends.
func DB(tb testing.TB) *store.DB {
	tb.Helper()
	return storetest.OpenDSN(tb, DSN(tb))
}

// DSN is storetest.DSN for a store the agent-mail migrations have already
// run on: on SQLite a copy of one store migrated once per test process
// (the migrations cost ~10 ms of CPU and a package's tests open dozens of
// stores), on PostgreSQL a new schema, migrated when the service opens it.
// Opening the service on it runs the migrations' check, which finds every
// one applied. For tests of the service, not of the migrations.
func DSN(tb testing.TB) string {
	tb.Helper()
	if storetest.PostgresURL() != "" {
		return storetest.DSN(tb)
	}
	return SQLite(tb)
}

// SQLite is the path of a copy of the migrated SQLite store, whatever the
// engine of the run, for tests of the SQLite engine itself.
func SQLite(tb testing.TB) string {
	tb.Helper()
	b, err := migrated()
	if err != nil {
		tb.Fatalf("amtest: migrated store: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "state.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// migrated is the file of a SQLite store with the agent-mail schema, made
// once per process.
var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "amtest-")
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
	st, err := amstore.Open(ctx, db)
	if err == nil {
		err = st.Close()
	}
	if err == nil {
		// Everything into the main file, so that it alone is the store.
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
})
