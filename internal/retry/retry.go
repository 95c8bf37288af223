// Package retry is mailgate's one retry style, on
// github.com/cenkalti/backoff/v4 (the design names it): a Policy (growing,
// jittered, capped waits), Do for a loop run in one call (the store's
// transactions that lose a race), Nth for a retry scheduled in a table (the
// mirror's outbox rows), and Hinted, the adapter through which a
// server-given wait (Retry-After) raises the next one (the Gmail reads).
package retry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Policy is an exponential backoff: the first wait Initial, each next one
// Multiplier times the last, capped at Max, each randomised by ±Jitter (a
// fraction) so that processes that failed together do not retry together.
type Policy struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64 // default 2
	Jitter     float64 // default 0.2; a negative value means none
	// Budget stops the retries once this much time has passed since the
	// first wait was asked for; 0 is no bound.
	Budget time.Duration
	// MaxRetries stops after this many retries; 0 is no bound, a negative
	// value allows none.
	MaxRetries int
}

// BackOff returns a fresh backoff.BackOff following p. Each retry loop
// needs its own: a BackOff holds the loop's state.
func (p Policy) BackOff() backoff.BackOff {
	b := p.exponential()
	if p.MaxRetries != 0 {
		return backoff.WithMaxRetries(b, uint64(max(p.MaxRetries, 0)))
	}
	return b
}

func (p Policy) exponential() *backoff.ExponentialBackOff {
	mult, jitter := p.Multiplier, p.Jitter
	if mult == 0 {
		mult = 2
	}
	switch {
	case jitter == 0:
		jitter = 0.2
	case jitter < 0:
		jitter = 0
	}
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.Initial),
		backoff.WithMaxInterval(p.Max),
		backoff.WithMultiplier(mult),
		backoff.WithRandomizationFactor(jitter),
		backoff.WithMaxElapsedTime(p.Budget),
	)
}

// Nth is the wait before retry n (n from 1) under p, ignoring Budget and
// MaxRetries: for a retry whose count is kept elsewhere (a table row's
// attempts), so no loop holds a BackOff.
func (p Policy) Nth(n int) time.Duration {
	b := p.exponential()
	b.MaxElapsedTime = 0
	// Past 64 doublings every interval is capped at Max.
	for i := 1; i < min(n, 64); i++ {
		b.NextBackOff()
	}
	return b.NextBackOff()
}

// Do calls f until it succeeds, fails with an error retryable rejects, p
// stops, or ctx ends; the first retry runs at once (most races are lost to
// a writer that has committed by then), the next ones after p's waits. It
// returns f's last error, never a bare context error.
func Do(ctx context.Context, p Policy, retryable func(error) bool, f func() error) error {
	// Most calls succeed at once: no backoff state on that path.
	if err := f(); err == nil || !retryable(err) || ctx.Err() != nil {
		return err
	}
	var last error
	err := backoff.Retry(func() error {
		last = f()
		if last != nil && !retryable(last) {
			return backoff.Permanent(last)
		}
		return last
	}, backoff.WithContext(p.BackOff(), ctx))
	if err != nil && last != nil {
		return last
	}
	return err
}

// Hinted lets one attempt raise the next wait to a server-given one
// (Retry-After), or ask for the next attempt at once (after refreshing a
// token). backoff/v4 calls NextBackOff right after the operation returns,
// so the operation calls Hint or Now just before returning its error. One
// per retry loop; not safe for concurrent use.
type Hinted struct {
	backoff.BackOff
	hint time.Duration
	now  bool
}

// NewHinted wraps b.
func NewHinted(b backoff.BackOff) *Hinted { return &Hinted{BackOff: b} }

// Hint makes the next wait at least d.
func (h *Hinted) Hint(d time.Duration) { h.hint = d }

// Now makes the next retry run at once.
func (h *Hinted) Now() { h.now = true }

// NextBackOff is the wrapped policy's next wait, raised to the hint; Stop
// stays Stop (a server's wait never extends the number of retries).
func (h *Hinted) NextBackOff() time.Duration {
	d := h.BackOff.NextBackOff()
	if d != backoff.Stop {
		d = max(d, h.hint)
		if h.now {
			d = 0
		}
	}
	h.hint, h.now = 0, false
	return d
}

// After parses a Retry-After header value (RFC 9110: delay-seconds or an
// HTTP date) into a wait from now; 0 when it is absent, malformed or past.
func After(header string, now time.Time) time.Duration {
	v := strings.TrimSpace(header)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(secs)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
