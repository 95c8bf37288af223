package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
)

func TestMigrateMultiStatementAndIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	fsys := fstest.MapFS{
		"0001_init.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);
CREATE TABLE b (y INTEGER);
CREATE TRIGGER a_ins AFTER INSERT ON a BEGIN INSERT INTO b (y) VALUES (new.x); END;`)},
	}
	MigrateConcurrently(t, path, fsys, 4)
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO a (x) VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var y, n int
	if err := db.QueryRow(`SELECT y FROM b`).Scan(&y); err != nil || y != 7 {
		t.Fatalf("trigger: y=%d err=%v", y, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE component='test'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("migrations recorded: %d, %v", n, err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
}

// MigrateConcurrently opens the store at dsn n times at once and migrates
// each with fsys, as servers starting together do. (Exported from a test
// file for the external tests, postgres_test.go.)
func MigrateConcurrently(t *testing.T, dsn string, fsys fs.FS, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			db, err := Open(context.Background(), dsn)
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			if err := db.Migrate(context.Background(), "test", fsys); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestOpenRefusesRelativePath(t *testing.T) {
	t.Parallel()
	if _, err := Open(context.Background(), "rel/state.db"); err == nil {
		t.Fatal("relative path accepted")
	}
}

// TestFlag: a bool is stored as 1 or 0 in an INTEGER column.
func TestFlag(t *testing.T) {
	t.Parallel()
	if Flag(true) != 1 || Flag(false) != 0 {
		t.Errorf("Flag(true), Flag(false) = %d, %d; want 1, 0", Flag(true), Flag(false))
	}
}
