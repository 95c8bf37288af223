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
