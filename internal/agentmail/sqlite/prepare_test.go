package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

// TestFirstUseOfStatementsUnderFullPool: more concurrent transactions than
// pool connections, each using a statement for the first time, must not
// deadlock (a transaction waiting for a second connection to prepare on,
// while every connection belongs to a transaction doing the same).
func TestFirstUseOfStatementsUnderFullPool(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const n = 32 // the pool holds 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- st.Read(ctx, func(t agentmail.Tx) error {
				// Hold the transaction a moment so they all overlap.
				time.Sleep(20 * time.Millisecond)
				rows, err := t.(*tx).query(ctx, fmt.Sprintf("SELECT %d + count(*) FROM am_projects", i))
				if err != nil {
					return err
				}
				return rows.Close()
			})
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("transaction failed (a deadlock ends in the 20 s context deadline): %v", err)
		}
	}
}
