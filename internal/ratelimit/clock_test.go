package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// Issue 31 item 4: a window that survives a wall clock that steps. Each test
// runs a fake wall clock (what the caller passes as now) and a fake
// monotonic clock (real time passing) from internal/testutil, on the
// engine of the run.

const month = 30 * 24 * time.Hour

// monoOf reads c as the monotonic clock named name.
func monoOf(c *testutil.Clock, name string) Monotonic {
	return func() (string, int64) { return name, c.Now().UnixMilli() }
}

// clocked is a limiter of 3 per hour on dsn with wall and real clocks.
func clocked(t *testing.T, dsn string, real *testutil.Clock, name string) *Limiter {
	t.Helper()
	l, _ := openLimiter(t, dsn, 3)
	l.SetMonotonic(monoOf(real, name))
	return l
}

// advance moves both clocks by d: time passes, the clock does not step.
func advance(d time.Duration, clocks ...*testutil.Clock) {
	for _, c := range clocks {
		c.Advance(d)
	}
}

func reserveN(t *testing.T, l *Limiter, wall, real *testutil.Clock, n int) {
	t.Helper()
	for i := range n {
		if _, err := l.Reserve(context.Background(), wall.Now(), fmt.Sprint("r", i)); err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
		advance(time.Minute, wall, real)
	}
}

func wantLimited(t *testing.T, l *Limiter, now time.Time, want time.Duration) {
	t.Helper()
	if got, err := l.Check(context.Background(), now); err != nil || got != want {
		t.Errorf("Check = %v, %v; want %v", got, err, want)
	}
	_, err := l.Reserve(context.Background(), now, "next")
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("Reserve = %v; want the limit, next slot in %v", err, want)
	}
	if le.RetryAfter != want {
		t.Errorf("RetryAfter = %v, want %v", le.RetryAfter, want)
	}
}

// Slots dated a month away from the wall clock's time now: the clock ran
// a month fast while three sends were made, then was set right (ahead); or
// it stepped a month forward a few minutes after them (back). The sends
// are 3, 2 and 1 minutes old for every process on the machine: the next
// slot frees in 57 minutes, not in a month.
func TestWindowSlotsDatedAMonthAway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		start, set time.Time // the wall clock at the first send, and after the sends
	}{
		{"ahead", t0.Add(month), t0.Add(3 * time.Minute)},
		{"back", t0, t0.Add(month + 3*time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wall, real := testutil.NewClock(tc.start), testutil.NewClock(t0)
			dsn := storetest.DSN(t)
			l := clocked(t, dsn, real, "boot:a")
			reserveN(t, l, wall, real, 3)
			wall.Set(tc.set) // real time went on
			wantLimited(t, l, wall.Now(), 57*time.Minute)
			// Another process on the same machine reads the same clock.
			wantLimited(t, clocked(t, dsn, real, "boot:a"), wall.Now(), 57*time.Minute)
			advance(57*time.Minute, wall, real)
			if _, err := l.Reserve(context.Background(), wall.Now(), "after"); err != nil {
				t.Fatalf("an hour after the sends: %v", err)
			}
		})
	}
}

// Slots dated a month ahead (as above), seen from a limiter that cannot age the slots by their clock
// (after a reboot; another host): a slot dated in the future counts as
// taken now, so it holds one window from when it is first seen, never a
// month.
func TestWindowSlotsDatedAMonthAheadOtherClock(t *testing.T) {
	t.Parallel()
	for _, other := range []string{"boot:b", ""} {
		t.Run(fmt.Sprintf("clock %q", other), func(t *testing.T) {
			wall, real := testutil.NewClock(t0.Add(month)), testutil.NewClock(t0)
			dsn := storetest.DSN(t)
			reserveN(t, clocked(t, dsn, real, "boot:a"), wall, real, 3)
			wall.Set(t0.Add(3 * time.Minute))
			l := clocked(t, dsn, real, other)
			if other == "" {
				l.SetMonotonic(nil)
			}
			wantLimited(t, l, wall.Now(), time.Hour)
			advance(30*time.Minute, wall, real)
			wantLimited(t, l, wall.Now(), 30*time.Minute)
			advance(30*time.Minute, wall, real)
			if _, err := l.Reserve(context.Background(), wall.Now(), "after"); err != nil {
				t.Fatalf("one window after the step: %v", err)
			}
		})
	}
}

// A wall clock that jumps about (a month either way, minutes, hours) while
// two processes send as fast as they may: in every real hour at most the
// limit is granted, and no refusal asks to wait longer than the window.
func TestWindowUnderAJumpingClock(t *testing.T) {
	t.Parallel()
	const limit = 3
	rng := rand.New(rand.NewPCG(31, 4))
	wall, real := testutil.NewClock(t0), testutil.NewClock(t0)
	dsn := storetest.DSN(t)
	var ls []*Limiter
	for range 2 {
		l, _ := openLimiter(t, dsn, limit)
		l.SetMonotonic(monoOf(real, "boot:a"))
		ls = append(ls, l)
	}
	var granted []time.Time  // real times
	var offset time.Duration // the wall clock's error
	for i := range 400 {
		advance(time.Duration(rng.IntN(10*60))*time.Second, real)
		switch rng.IntN(8) {
		case 0:
			offset = month
		case 1:
			offset = -month
		case 2:
			offset += time.Duration(rng.IntN(5)) * time.Hour
		case 3:
			offset -= time.Duration(rng.IntN(5)) * time.Hour
		case 4:
			offset = 0
		}
		wall.Set(real.Now().Add(offset))
		_, err := ls[i%2].Reserve(context.Background(), wall.Now(), fmt.Sprint(i))
		var le *LimitError
		switch {
		case err == nil:
			granted = append(granted, real.Now())
		case errors.As(err, &le):
			if le.RetryAfter > time.Hour {
				t.Fatalf("step %d: told to wait %v, longer than the window", i, le.RetryAfter)
			}
		default:
			t.Fatal(err)
		}
	}
	for i := range granted {
		n := 0
		for _, g := range granted[i:] {
			if g.Sub(granted[i]) < time.Hour {
				n++
			}
		}
		if n > limit {
			t.Fatalf("%d sends granted in the real hour from %v", n, granted[i])
		}
	}
	if len(granted) < 20 {
		t.Fatalf("only %d sends granted in %v: the window blocks too long", len(granted), real.Now().Sub(t0))
	}
	t.Logf("%d sends granted over %v of real time", len(granted), real.Now().Sub(t0).Round(time.Minute))
}
