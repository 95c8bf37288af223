// Package ratelimit is mailgate's durable rolling send window: at most Limit
// sends and replies in any Window (one hour by default), counted across every
// mailgate process that shares the state store and across restarts.
//
// The original implementation kept the window in an in-memory deque, checked
// it and recorded the send in separate steps, and forgot everything on
// restart, so two processes (or one restarted process) could each send the
// full quota. Here a send first Reserves a slot: counting the window and
// inserting the reservation happen in ONE write transaction (immediate on
// SQLite, which takes the file's write lock up front; serializable on
// PostgreSQL, where servers on many hosts share one database), so concurrent
// reservations from any number of processes are serialised and the limit is
// exact. A reservation is
// made before the email leaves and is kept even if the send fails, unless the
// caller proves Google never received the request and calls Release.
//
// Time is a parameter: the caller passes now (the wall clock), so tests
// fabricate time and processes on several hosts agree on one clock.
//
// # A clock that steps
//
// The wall clock can step: back (a clock corrected after running ahead),
// which made slots look taken in the future and blocked sends for as long
// as the step (30 days: 43,321 minutes); or forward, which made the last
// hour's slots look old and granted a new quota at once. So a slot also
// records a reading of a monotonic clock (SetMonotonic; serve uses
// SystemClock: on Linux the machine's clock since boot, named by the boot's
// id, shared by every process on the machine), and a slot is aged:
//
//   - by that clock, when the limiter reads the same clock (same machine,
//     same boot): its real age, whatever the wall clock did. Neither a step
//     back nor a step forward changes it.
//   - by its wall time otherwise (a slot from before a reboot, from another
//     host on PostgreSQL, rebuilt from the audit log, or taken by a limiter
//     without a monotonic clock), a time in the future counting as now.
//     Reserve re-dates such a future slot to now, in this limiter's clock
//     when it has one (its wall time is kept for the host whose clock it is),
//     so a slot never holds longer than one window after it was first seen.
//
// So the limit never blocks longer than its window, and on one machine a
// step forward never grants more than the limit in any real hour. What no
// clock can give: servers on several hosts age each other's slots by wall
// time, so a host whose clock jumps forward sees the others' slots expire
// (their own are still counted by their own clocks).
package ratelimit

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Limiter counts reservations in a rolling window stored in the state store.
type Limiter struct {
	db     *store.DB
	bucket string
	limit  int
	window time.Duration
	q      queries
	mono   Monotonic // nil: slots are aged by wall time alone
}

// SetMonotonic has the limiter record, with each slot it takes, a reading
// of m, and age the slots that carry a reading of the same clock by it
// rather than by the wall clock (see the package comment). Set it before
// the limiter is used. Tests that fabricate now leave it unset or give a
// fabricated clock.
func (l *Limiter) SetMonotonic(m Monotonic) { l.mono = m }

// noClock names no clock: a limiter without a monotonic clock treats every
// slot as another clock's.
const noClock = "-"

// reading is the limiter's clock and its reading; ("", 0) and noClock
// without one.
func (l *Limiter) reading() (store, match string, ms int64) {
	if l.mono == nil {
		return "", noClock, 0
	}
	c, ms := l.mono()
	return c, c, ms
}

// Buckets: each limit counts its own slots in the shared table, so organising
// mail never uses up sends and the other way round.
const (
	BucketSend     = "send"     // sends and replies (SEND_LIMIT_PER_HOUR)
	BucketOrganize = "organize" // modify_labels, untrash_email (ORGANIZE_LIMIT)
)

// queries are the limiter's statements, written once for both engines and
// rebound to the store's placeholders.
type queries struct{ prune, window, insert, release, adopt, redate, hasRef, restore string }

func newQueries(db *store.DB) queries {
	return queries{
		// A slot of this limiter's clock is pruned by its reading, any
		// other by its wall time.
		prune: db.Rebind(`DELETE FROM ratelimit_slots WHERE bucket = ? AND ((clock = ? AND mono_ms <= ?) OR (clock <> ? AND at_ms <= ?))`),
		window: db.Rebind(`SELECT at_ms, clock, mono_ms FROM ratelimit_slots
			WHERE bucket = ? AND ((clock = ? AND mono_ms > ?) OR (clock <> ? AND at_ms > ?))`),
		insert:  db.Rebind(`INSERT INTO ratelimit_slots (bucket, at_ms, ref, clock, mono_ms) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		release: db.Rebind(`DELETE FROM ratelimit_slots WHERE id = ?`),
		adopt:   db.Rebind(`UPDATE ratelimit_slots SET clock = ?, mono_ms = ? WHERE bucket = ? AND clock <> ? AND at_ms > ?`),
		redate:  db.Rebind(`UPDATE ratelimit_slots SET at_ms = ? WHERE bucket = ? AND at_ms > ?`),
		hasRef:  db.Rebind(`SELECT count(*) FROM ratelimit_slots WHERE bucket = ? AND ref = ?`),
		restore: db.Rebind(`INSERT INTO ratelimit_slots (bucket, at_ms, ref) VALUES (?, ?, ?)`),
	}
}

// New returns the send Limiter (BucketSend) allowing limit reservations per
// window, migrating the "ratelimit" component of db.
func New(ctx context.Context, db *store.DB, limit int, window time.Duration) (*Limiter, error) {
	return NewBucket(ctx, db, BucketSend, limit, window)
}

// NewBucket returns a Limiter of bucket allowing limit reservations per
// window: its slots are counted apart from every other bucket's.
func NewBucket(ctx context.Context, db *store.DB, bucket string, limit int, window time.Duration) (*Limiter, error) {
	if bucket == "" {
		return nil, fmt.Errorf("creating rate limiter: no bucket")
	}
	if limit < 1 {
		return nil, fmt.Errorf("creating rate limiter: limit %d must be at least 1", limit)
	}
	if window <= 0 {
		return nil, fmt.Errorf("creating rate limiter: window %v must be positive", window)
	}
	if err := db.MigrateDialect(ctx, "ratelimit", migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("creating rate limiter: %w", err)
	}
	return &Limiter{db: db, bucket: bucket, limit: limit, window: window, q: newQueries(db)}, nil
}

// Limit returns the number of sends allowed per window.
func (l *Limiter) Limit() int { return l.limit }

// Window returns the length of the rolling window.
func (l *Limiter) Window() time.Duration { return l.window }

// LimitError reports a full window.
type LimitError struct {
	Limit      int
	Window     time.Duration
	RetryAfter time.Duration
}

// Error returns the contract's text, e.g. "Rate limit exceeded (10
// emails/hour). Next send available in 12 minutes.". The minutes are rounded
// up and at least 1, so the agent never retries too early.
func (e *LimitError) Error() string {
	per := "hour"
	if e.Window != 0 && e.Window != time.Hour {
		per = e.Window.String()
	}
	return fmt.Sprintf("Rate limit exceeded (%d emails/%s). Next send available in %d minutes.",
		e.Limit, per, e.RetryMinutes())
}

// RetryMinutes is RetryAfter in whole minutes, rounded up, at least 1.
func (e *LimitError) RetryMinutes() int {
	m := int(math.Ceil(e.RetryAfter.Minutes()))
	return max(m, 1)
}

// Reservation is one slot held in the window.
type Reservation struct {
	l   *Limiter
	id  int64
	At  time.Time
	Ref string
}

// Check reports how long until a slot is free at now (0: one is free now)
// without reserving anything. DEV_MODE uses it to say whether a send would
// have been allowed.
func (l *Limiter) Check(ctx context.Context, now time.Time) (time.Duration, error) {
	_, clock, ms := l.reading()
	rows, err := l.db.QueryContext(ctx, l.q.window, l.bucket, clock, ms-l.window.Milliseconds(), clock, l.windowStart(now))
	if err != nil {
		return 0, fmt.Errorf("checking rate limit: %w", err)
	}
	retry, err := l.retryAfter(rows, now, clock, ms)
	if err != nil {
		return 0, fmt.Errorf("checking rate limit: %w", err)
	}
	return retry, nil
}

// Reserve takes a slot at now for ref (a short label for the send, e.g. the
// approval's request id). When the window is full it returns a *LimitError
// and reserves nothing. The count and the insert happen in one write
// transaction (store.DB.Write: immediate on SQLite, serializable on
// PostgreSQL), so concurrent callers in any process on any host never
// overshoot: on PostgreSQL, of two reservations that both counted the same
// window, one fails to commit and counts again.
func (l *Limiter) Reserve(ctx context.Context, now time.Time, ref string) (*Reservation, error) {
	var id int64
	var limited *LimitError
	stored, clock, ms := l.reading()
	err := l.db.Write(ctx, func(tx *sql.Tx) error {
		limited = nil
		if l.db.Dialect == store.Postgres {
			// Serializable alone would keep the count exact, but a burst of
			// reservations would then fail and retry one another; the table
			// lock makes them queue, as SQLite's write lock does. It must be
			// the first statement: the transaction's snapshot is taken at its
			// first query, and LOCK TABLE takes none.
			if _, err := tx.ExecContext(ctx, `LOCK TABLE ratelimit_slots IN EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		// Rows far outside any window are dead weight; keeping a day (or two
		// windows) leaves room for processes configured with longer windows.
		keep := max(2*l.window, 24*time.Hour)
		if _, err := tx.ExecContext(ctx, l.q.prune, l.bucket, clock, ms-keep.Milliseconds(), clock, now.Add(-keep).UnixMilli()); err != nil {
			return err
		}
		// A slot dated in the future (the wall clock stepped back since, or
		// another host's runs ahead) counts as taken now, and from now on:
		// taken over by this limiter's clock, or re-dated without one.
		if stored != "" {
			if _, err := tx.ExecContext(ctx, l.q.adopt, stored, ms, l.bucket, stored, now.UnixMilli()); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, l.q.redate, now.UnixMilli(), l.bucket, now.UnixMilli()); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, l.q.window, l.bucket, clock, ms-l.window.Milliseconds(), clock, l.windowStart(now))
		if err != nil {
			return err
		}
		retry, err := l.retryAfter(rows, now, clock, ms)
		if err != nil {
			return err
		}
		if retry > 0 {
			limited = &LimitError{Limit: l.limit, Window: l.window, RetryAfter: retry}
			return nil // commit the pruning; reserve nothing
		}
		return tx.QueryRowContext(ctx, l.q.insert, l.bucket, now.UnixMilli(), ref, stored, ms).Scan(&id)
	})
	if err != nil {
		return nil, fmt.Errorf("reserving send slot: %w", err)
	}
	if limited != nil {
		return nil, limited
	}
	return &Reservation{l: l, id: id, At: now, Ref: ref}, nil
}

// Release gives the slot back. Call it only when the send provably never
// reached Google; a second call is a no-op.
func (r *Reservation) Release(ctx context.Context) error {
	if _, err := r.l.db.ExecContext(ctx, r.l.q.release, r.id); err != nil {
		return fmt.Errorf("releasing send slot: %w", err)
	}
	return nil
}

// windowStart is the exclusive lower bound of the window ending at now: a
// slot taken at exactly now-window has expired.
func (l *Limiter) windowStart(now time.Time) int64 {
	return now.Add(-l.window).UnixMilli()
}

// retryAfter consumes rows (the slots in the window) and returns how long
// until fewer than limit remain in the window. A slot of the limiter's clock
// (clock, ms) is as old as that clock says; any other is as old as its wall
// time says, a time after now counting as now. So no slot is younger than
// 0, and none holds longer than one window from now.
func (l *Limiter) retryAfter(rows *sql.Rows, now time.Time, clock string, ms int64) (time.Duration, error) {
	defer rows.Close()
	nowMS := now.UnixMilli()
	var ats []int64 // when each slot was taken, in now's terms
	for rows.Next() {
		var at, mono int64
		var c string
		if err := rows.Scan(&at, &c, &mono); err != nil {
			return 0, err
		}
		if c == clock {
			at = nowMS - max(ms-mono, 0)
		}
		ats = append(ats, min(at, nowMS))
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ats) < l.limit {
		return 0, nil
	}
	slices.Sort(ats)
	// Once the oldest len-limit+1 slots have left the window, one is free.
	frees := time.UnixMilli(ats[len(ats)-l.limit]).Add(l.window)
	return max(frees.Sub(now), time.Millisecond), nil
}

// Past is a slot taken before this store kept the window: a send the audit
// log holds (see Restore).
type Past struct {
	At  time.Time
	Ref string // unique per send, so a second Restore adds nothing
}

// Restore puts slots back into the window from another record of the sends
// (the audit log), when the store that held them was lost: without them a
// new store would allow a full window's quota at once. A slot whose Ref is
// already in the bucket is skipped, so servers restoring at once, or twice,
// add each send once. It returns how many slots it added.
func (l *Limiter) Restore(ctx context.Context, past []Past) (int, error) {
	added := 0
	err := l.db.Write(ctx, func(tx *sql.Tx) error {
		added = 0
		for _, p := range past {
			var n int
			if err := tx.QueryRowContext(ctx, l.q.hasRef, l.bucket, p.Ref).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, l.q.restore, l.bucket, p.At.UnixMilli(), p.Ref); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("restoring the send window: %w", err)
	}
	return added, nil
}

// WithBucket returns a limiter of the same store, limit, window and clock
// over bucket's own slots: how each Gmail account gets its own send limit
// (gate.Gate.limiter) without a second migration or setting.
func (l *Limiter) WithBucket(bucket string) *Limiter {
	if bucket == l.bucket {
		return l
	}
	c := *l
	c.bucket = bucket
	return &c
}
