package approval

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestStoreLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLedger(t)
	if err := l.Issue(ctx, "r1", "h1", t0); err != nil {
		t.Fatal(err)
	}
	if err := l.Issue(ctx, "r1", "h1", t0); err != nil {
		t.Fatalf("re-issue: %v", err)
	}
	for _, tc := range []struct {
		id, sha string
		want    bool
	}{{"r1", "h1", true}, {"r1", "h2", false}, {"r2", "h1", false}} {
		if got, err := l.Issued(ctx, tc.id, tc.sha); err != nil || got != tc.want {
			t.Errorf("Issued(%s, %s) = %v, %v; want %v", tc.id, tc.sha, got, err, tc.want)
		}
	}
	if err := l.Consume(ctx, "r2", "h1", t0); !errors.Is(err, ErrNotIssued) {
		t.Errorf("consume unknown: %v", err)
	}

	var won atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := l.Consume(ctx, "r1", "h1", t0); {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, ErrAlreadyClaimed):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d consumers won", won.Load())
	}
	if ok, _ := l.Issued(ctx, "r1", "h1"); ok {
		t.Fatal("consumed request still issued")
	}

	// Rows older than Retention are pruned when new requests are issued.
	if err := l.Issue(ctx, "r3", "h3", t0.Add(Retention+time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := l.Consume(ctx, "r1", "h1", t0); !errors.Is(err, ErrNotIssued) {
		t.Errorf("old row not pruned: %v", err)
	}
}
