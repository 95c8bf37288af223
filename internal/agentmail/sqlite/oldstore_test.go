package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// oldStore opens the SQLite store at path as an earlier version left it:
// migrated with the agent-mail migrations up to and including last only.
// The caller fills it and closes it; the next open upgrades it.
func oldStore(t *testing.T, path, last string) *store.DB {
	t.Helper()
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("..", "amsql", "migrations", "sqlite", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	for _, f := range files {
		if name := filepath.Base(f); name <= last {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			old[name] = &fstest.MapFile{Data: body}
		}
	}
	if _, ok := old[last]; !ok {
		t.Fatalf("no migration %s", last)
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, amsql.Component, old); err != nil {
		t.Fatal(err)
	}
	return db
}

// oldAliceAndBob is a fresh store left by an earlier version (see
// oldStore) holding project /p (id 1) with its agents Alice (1) and Bob
// (2), and then what the statements rows write; it returns the store's
// path, closed for the test to reopen.
func oldAliceAndBob(t *testing.T, last, rows string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db := oldStore(t, path, last)
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO am_projects (id, slug, human_key, created_us) VALUES (1, 'p', '/p', 0);
		INSERT INTO am_agents (id, project_id, name, inception_us, last_active_us) VALUES (1, 1, 'Alice', 0, 0), (2, 1, 'Bob', 0, 0);
		` + rows); err != nil {
		t.Fatal(err)
	}
	return path
}
