package drafts

import (
	"context"
	"testing"

	"github.com/mailgate/mailgate/internal/store/storetest"
)

// TestRegistry: a recorded draft is known, on every engine and across a
// second opening of the store (the migration runs once); any other is not.
func TestRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.DSN(t)
	r, err := New(ctx, storetest.OpenDSN(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // recording twice is a no-op
		if err := r.Record(ctx, "r123"); err != nil {
			t.Fatal(err)
		}
	}
	again, err := New(ctx, storetest.OpenDSN(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"r123": true, "r124": false, "": false} {
		if got, err := again.Created(ctx, id); err != nil || got != want {
			t.Errorf("Created(%q) = %v, %v; want %v", id, got, err, want)
		}
	}
}
