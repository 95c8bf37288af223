package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// Every run of a transaction after its first is counted, and only those.
func TestRetriesCounted(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	busy := errors.New("database is locked")
	before := Retries()
	runs := 0
	if err := db.Retry(ctx, func() error {
		if runs++; runs <= 2 {
			return busy
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Retry(ctx, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := Retries() - before; got != 2 {
		t.Fatalf("counted %d retries, want 2", got)
	}
}
