package retry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cenkalti/backoff/v4"
)

func TestPolicyNth(t *testing.T) {
	t.Parallel()
	p := Policy{Initial: 100 * time.Millisecond, Max: time.Second}
	tests := []struct {
		n      int
		lo, hi time.Duration // ±20% jitter around min(Initial·2^(n-1), Max)
	}{
		{1, 80 * time.Millisecond, 120 * time.Millisecond},
		{2, 160 * time.Millisecond, 240 * time.Millisecond},
		{4, 640 * time.Millisecond, 960 * time.Millisecond},
		{5, 800 * time.Millisecond, 1200 * time.Millisecond}, // capped
		{1000, 800 * time.Millisecond, 1200 * time.Millisecond},
	}
	for _, tc := range tests {
		for range 50 {
			if d := p.Nth(tc.n); d < tc.lo || d > tc.hi {
				t.Fatalf("Nth(%d) = %v, want within [%v, %v]", tc.n, d, tc.lo, tc.hi)
			}
		}
	}
	if d := (Policy{Initial: time.Second, Max: time.Minute, Jitter: -1}).Nth(3); d != 4*time.Second {
		t.Errorf("without jitter Nth(3) = %v, want 4s", d)
	}
}

var errBusy = errors.New("busy")

func isBusy(err error) bool { return errors.Is(err, errBusy) }

func TestDo(t *testing.T) {
	t.Parallel()
	p := Policy{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond, Budget: time.Second}
	tests := []struct {
		name    string
		results []error // f's answers in turn; the last one repeats
		calls   int
		want    error
	}{
		{"at once", []error{nil}, 1, nil},
		{"a lost race, then success", []error{errBusy, errBusy, nil}, 3, nil},
		{"not retryable", []error{errBusy, context.DeadlineExceeded}, 2, context.DeadlineExceeded},
		{"budget spent: the last error", []error{errBusy}, -1, errBusy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				start := time.Now()
				err := Do(t.Context(), p, isBusy, func() error {
					calls++
					return tc.results[min(calls, len(tc.results))-1]
				})
				if !errors.Is(err, tc.want) {
					t.Fatalf("Do = %v, want %v", err, tc.want)
				}
				if tc.calls >= 0 && calls != tc.calls {
					t.Errorf("%d calls, want %d", calls, tc.calls)
				}
				if tc.calls < 0 {
					// The fake clock shows the budget was what stopped it
					// (backoff/v4 stops when the next wait would pass it).
					if el := time.Since(start); el < p.Budget-2*p.Max || el > p.Budget {
						t.Errorf("gave up after %v, want the budget %v", el, p.Budget)
					}
				}
			})
		})
	}
}

// TestDoFirstRetryAtOnce: the first retry does not wait (the winner of
// the race has committed by then).
func TestDoFirstRetryAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		Do(t.Context(), Policy{Initial: time.Second, Max: time.Second, Jitter: -1}, isBusy, func() error {
			at = append(at, time.Now())
			if len(at) < 3 {
				return errBusy
			}
			return nil
		})
		if len(at) != 3 || at[1] != at[0] || at[2].Sub(at[1]) != time.Second {
			t.Errorf("calls at %v, want the second at once and the third 1s later", at)
		}
	})
}

func TestDoContextEndsWithLastError(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err := Do(ctx, Policy{Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond}, isBusy, func() error { return errBusy })
		if !errors.Is(err, errBusy) {
			t.Fatalf("Do = %v, want f's last error, not a bare context error", err)
		}
	})
}

func TestHinted(t *testing.T) {
	t.Parallel()
	h := NewHinted(Policy{Initial: time.Second, Max: time.Second, Jitter: -1, MaxRetries: 2}.BackOff())
	h.Hint(5 * time.Second)
	if d := h.NextBackOff(); d != 5*time.Second {
		t.Errorf("hinted wait %v, want the server's 5s", d)
	}
	h.Now()
	if d := h.NextBackOff(); d != 0 {
		t.Errorf("after Now: %v, want 0", d)
	}
	h.Hint(time.Hour)
	if d := h.NextBackOff(); d != backoff.Stop {
		t.Errorf("retries spent: %v, want Stop (a hint never adds retries)", d)
	}
	if d := NewHinted(Policy{Initial: time.Second, Max: time.Second, Jitter: -1}.BackOff()).NextBackOff(); d != time.Second {
		t.Errorf("no hint: %v, want the policy's 1s", d)
	}
	if d := NewHinted(Policy{Initial: time.Second, Max: time.Second, MaxRetries: -1}.BackOff()).NextBackOff(); d != backoff.Stop {
		t.Errorf("MaxRetries < 0: %v, want Stop at once", d)
	}
}

func TestAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 11, 19, 59, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 7 ", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"Fri, 11 Sep 2026 20:00:00 GMT", time.Minute},
		{"Fri, 11 Sep 2026 19:00:00 GMT", 0}, // past
		{"soon", 0},
	}
	for _, tc := range tests {
		if got := After(tc.header, now); got != tc.want {
			t.Errorf("After(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
