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
// Time is always a parameter: the caller passes now, so tests fabricate time
// and several processes agree on one clock (the wall clock).
//
// Durability: a committed reservation survives a process crash (SIGKILL). On
// SQLite the store runs WAL with synchronous=NORMAL, so after a power loss the
// last few commits before the loss may be rolled back; the window can then
// undercount by those reservations. On PostgreSQL a commit is as durable as
// the server's synchronous_commit makes it.
package ratelimit

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"math"
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
}

// Buckets: each limit counts its own slots in the shared table, so organising
// mail never uses up sends and the other way round.
const (
	BucketSend     = "send"     // sends and replies (SEND_LIMIT_PER_HOUR)
	BucketOrganize = "organize" // modify_labels, untrash_email (ORGANIZE_LIMIT)
)

// queries are the limiter's statements, written once for both engines and
// rebound to the store's placeholders.
type queries struct{ prune, window, insert, release string }

func newQueries(db *store.DB) queries {
	return queries{
		prune:   db.Rebind(`DELETE FROM ratelimit_slots WHERE bucket = ? AND at_ms <= ?`),
		window:  db.Rebind(`SELECT at_ms FROM ratelimit_slots WHERE bucket = ? AND at_ms > ? ORDER BY at_ms`),
		insert:  db.Rebind(`INSERT INTO ratelimit_slots (bucket, at_ms, ref) VALUES (?, ?, ?) RETURNING id`),
		release: db.Rebind(`DELETE FROM ratelimit_slots WHERE id = ?`),
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
	sub, err := db.MigrationsFor(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("creating rate limiter: %w", err)
	}
	if err := db.Migrate(ctx, "ratelimit", sub); err != nil {
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
	rows, err := l.db.QueryContext(ctx, l.q.window, l.bucket, l.windowStart(now))
	if err != nil {
		return 0, fmt.Errorf("checking rate limit: %w", err)
	}
	retry, err := l.retryAfter(rows, now)
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
		if _, err := tx.ExecContext(ctx, l.q.prune, l.bucket, now.Add(-keep).UnixMilli()); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, l.q.window, l.bucket, l.windowStart(now))
		if err != nil {
			return err
		}
		retry, err := l.retryAfter(rows, now)
		if err != nil {
			return err
		}
		if retry > 0 {
			limited = &LimitError{Limit: l.limit, Window: l.window, RetryAfter: retry}
			return nil // commit the pruning; reserve nothing
		}
		return tx.QueryRowContext(ctx, l.q.insert, l.bucket, now.UnixMilli(), ref).Scan(&id)
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

// retryAfter consumes rows (slot times in the window, oldest first) and
// returns how long until fewer than limit remain in the window. Slots dated
// after now (clock skew between processes) count too.
func (l *Limiter) retryAfter(rows *sql.Rows, now time.Time) (time.Duration, error) {
	defer rows.Close()
	var ats []int64
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return 0, err
		}
		ats = append(ats, at)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(ats) < l.limit {
		return 0, nil
	}
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
			if err := tx.QueryRowContext(ctx, l.db.Rebind(`SELECT count(*) FROM ratelimit_slots WHERE bucket = ? AND ref = ?`),
				l.bucket, p.Ref).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, l.db.Rebind(`INSERT INTO ratelimit_slots (bucket, at_ms, ref) VALUES (?, ?, ?)`),
				l.bucket, p.At.UnixMilli(), p.Ref); err != nil {
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
