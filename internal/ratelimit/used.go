package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Used is how many slots are taken in the window ending at now, counted as
// Check counts them (for the metrics; it reserves nothing).
func (l *Limiter) Used(ctx context.Context, now time.Time) (int, error) {
	_, clock, ms := l.reading()
	rows, err := l.db.QueryContext(ctx, l.q.window, l.bucket, clock, ms-l.window.Milliseconds(), clock, l.windowStart(now))
	if err != nil {
		return 0, fmt.Errorf("counting send slots: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("counting send slots: %w", err)
	}
	return n, nil
}
