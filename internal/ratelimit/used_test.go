package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store/storetest"
)

// Used counts the slots in the window as Check does, reserving nothing.
func TestUsed(t *testing.T) {
	ctx := context.Background()
	l, _ := openLimiter(t, storetest.DSN(t), 3)
	for i, at := range []time.Duration{0, 10 * time.Minute, 20 * time.Minute} {
		if _, err := l.Reserve(ctx, t0.Add(at), "s"); err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{30 * time.Minute, 3}, {60 * time.Minute, 2}, {75 * time.Minute, 1}, {2 * time.Hour, 0}} {
		for range 2 { // reading twice changes nothing
			if n, err := l.Used(ctx, t0.Add(tc.at)); err != nil || n != tc.want {
				t.Fatalf("Used at +%v = %d, %v; want %d", tc.at, n, err, tc.want)
			}
		}
	}
}
