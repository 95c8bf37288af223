package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mailgate/mailgate/internal/testutil"
)

// A store file that exists but lost its history is refused with what to do;
// only a missing file is created (issue 31).
func TestOpenRefusesAStoreThatLostItsHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
		problem string
	}{
		{"truncated to 0 bytes", func(t *testing.T, path string) {
			populated(t, path)
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
		}, "is empty (0 bytes)"},
		{"not an SQLite file", func(t *testing.T, path string) {
			writeFile(t, path, []byte(strings.Repeat("not a database\n", 500)))
		}, "is not "},
		{"an SQLite file of another program", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)`); err != nil {
				t.Fatal(err)
			}
		}, "without mailgate's schema"},
		{"damaged pages", func(t *testing.T, path string) {
			populated(t, path)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Two pages in the middle of the file overwritten, as a bad
			// sector or a torn copy leaves them.
			mid := len(b) / 2 / 4096 * 4096
			for i := mid; i < mid+8192 && i < len(b); i++ {
				b[i] = 0xA5
			}
			writeFile(t, path, b)
		}, "is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			tc.prepare(t, path)
			before, _ := os.ReadFile(path)
			db, err := Open(ctx, path)
			if err == nil {
				// Today's code opened it; a damaged page surfaced only later.
				db.Close()
				t.Fatalf("Open accepted a store that %s", tc.problem)
			}
			var de *DamagedError
			if !errors.As(err, &de) {
				t.Fatalf("Open = %v, want a DamagedError", err)
			}
			for _, want := range []string{tc.problem, "Restore it from a backup", "mv " + path + " " + path + ".broken"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Error("the refused file was changed")
			}
		})
	}
}

// A missing store is created whole (never a 0-byte file) and reported
// fresh until a migration runs; reopened, it is not fresh.
func TestOpenCreatesAMissingStoreFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Fresh {
		t.Error("a new store is not Fresh")
	}
	if err := db.Migrate(ctx, "test", fstest.MapFS{"0001.sql": {Data: []byte(`CREATE TABLE a (x INTEGER)`)}}); err != nil {
		t.Fatal(err)
	}
	if at, err := db.CreatedAt(ctx); err != nil || at.IsZero() {
		t.Errorf("CreatedAt = %v, %v", at, err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Fresh {
		t.Error("a store with migrations is Fresh")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".state.db.new-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// populated is a store with enough rows to span many pages.
func populated(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "test", fstest.MapFS{"0001.sql": {Data: []byte(`CREATE TABLE a (x INTEGER PRIMARY KEY, y TEXT);
CREATE INDEX a_y ON a (y)`)}}); err != nil {
		t.Fatal(err)
	}
	// One transaction: 2,000 commits cost half a second and make the same
	// pages.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		if _, err := tx.Exec(`INSERT INTO a (y) VALUES (?)`, fmt.Sprintf("row %d %s", i, strings.Repeat("x", 100))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A server starting beside one that migrates the store (remaking a
// full-text table, as agent mail's 0008 does) must not take the schema
// change for damage: quick_check constructs the FTS5 tables, and a commit
// between its reads was SQLITE_SCHEMA, which refused the store and ended
// the server (seen when TestMailboxCLIEquivalence started two servers on a
// new home at once).
func TestOpenBesideAMigratingServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, path := openTemp(t)
	if err := db.Migrate(ctx, "test", fstest.MapFS{"0001.sql": {Data: []byte(`CREATE VIRTUAL TABLE f USING fts5(x)`)}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			_, err := db.ExecContext(ctx, fmt.Sprintf(`BEGIN IMMEDIATE; DROP TABLE f; CREATE VIRTUAL TABLE f USING fts5(x, prefix = '%d'); COMMIT`, i%3+2))
			if err != nil {
				done <- err
				return
			}
		}
	}()
	for range testutil.Size(100, 300) { // 300 checks in make test (MAILGATE_TEST_FULL)
		if err := verifyFile(ctx, path); err != nil {
			t.Errorf("a schema change beside the start refused the store: %v", err)
			break
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("the migrating side: %v", err)
	}
}

// verifyFile checks the store at path on a new connection, as a start
// does before the connection gets the store's settings.
func verifyFile(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return verifySQLite(ctx, c, path)
}

// Servers started together on a new home open one new store at once. The
// store's connections switch it to WAL, and two connections that both read
// a rollback-journal file and then both ask for the write lock to switch it
// are a deadlock SQLite answers with SQLITE_BUSY at once, busy timeout or
// not: one server ended with "opening store: database is locked" (a CI run
// of ratelimit's TestExactLimitAcrossProcesses). A new store is created in
// WAL mode, so no opener has to switch it.
func TestOpenANewStoreTogether(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for round := range testutil.Size(12, 40) { // 40 rounds in make test (MAILGATE_TEST_FULL)
		path := filepath.Join(t.TempDir(), "state.db")
		if round%2 == 1 {
			// A store made by an older mailgate: rollback journal, so the
			// first connections switch it.
			old, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := old.Exec(schemaMigrationsSQLite); err != nil {
				t.Fatal(err)
			}
			old.Close()
		}
		errs := make(chan error, 6)
		for range cap(errs) {
			go func() {
				db, err := Open(ctx, path)
				if err == nil {
					err = db.Close()
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
