// Package outbox carries agent-mail messages out of the store to sinks:
// the Gmail mirror (internal/mirror: messages.insert under
// AgentMail/<project>) and the vault archive (internal/archive). It knows
// no sink: each implements Sink, and this package gives them the queue,
// the leases and the workers.
//
// The store feeds every sink through a durable outbox (its own schema,
// migrations/<engine>/0001_outbox.sql, recorded under the component name
// "mirror" it was born with): a trigger enqueues each message for each
// registered sink inside the transaction that writes it, so an agent's
// call pays one indexed insert and never waits for Gmail. Workers in any
// number of processes drain the outbox under leases; a row leaves the
// outbox only in the transaction that records its outcome, so an outage, a
// 429 storm or a crash loses nothing.
//
// The outbox owns its tables (am_mirror_*) and reads agent mail only
// through agent-mail's exported API (Messages); the trigger and the first
// registration's backfill (Open) are the two places its SQL names an
// agent-mail table, both reading only a message's id, project and thread,
// because queuing must happen in the transaction that writes the message.
package outbox

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

// Item is one outbox row handed to a sink.
type Item struct {
	MessageID int64
	ProjectID int64
	ThreadKey string // thread_id, or the message's own id when it names none
	Attempts  int    // claims so far, this one included: >1 means an earlier claim may have done the work

	claim string // this claim's lease identity (see Outbox.claimID)
}

// Outbox is one sink's view of the shared outbox.
type Outbox struct {
	db    *store.DB
	sink  string
	owner string        // this worker's lease identity
	lease time.Duration // how long a claim keeps other workers off a row
	now   func() time.Time
	seq   atomic.Int64 // claims made, for claimID
}

// claimID names one claim: the process's owner and a sequence number. A
// lease belongs to a claim, not to a process: the lanes of one worker share
// the Outbox, and when a slow lane's lease lapsed and another lane claimed
// the row again, the slow lane's Retry, matching on the process alone,
// released the new claim; a third lane then took the row and inserted it a
// second time while the second was inserting it (seen in TestCrash).
func (o *Outbox) claimID() string { return o.owner + "." + strconv.FormatInt(o.seq.Add(1), 10) }

// Open registers sink (so the trigger enqueues new messages for it)
// and returns its outbox. The first registration of a sink also enqueues
// every message already stored: a mirror switched on later still copies the
// whole history. It migrates the outbox's schema (Migrate); the agent-mail
// migrations must have run.
func Open(ctx context.Context, db *store.DB, sink string, lease time.Duration) (*Outbox, error) {
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	if lease <= 0 {
		lease = 2 * time.Minute
	}
	o := &Outbox{db: db, sink: sink, owner: newOwner(), lease: lease, now: time.Now}
	err := o.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO am_mirror_sinks (name, created_us) VALUES (?, ?)
			ON CONFLICT DO NOTHING`), sink, o.now().UnixMicro())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // already registered: the trigger has been feeding it
		}
		// The backfill reads am_messages in the registration's own
		// transaction: a message written meanwhile is either seen here or
		// queued by the trigger (which sees this sink), never neither.
		_, err = tx.ExecContext(ctx, db.Rebind(`INSERT INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
			SELECT ?, id, project_id, COALESCE(thread_id, CAST(id AS TEXT)) FROM am_messages
			WHERE true ON CONFLICT DO NOTHING`), sink) // SQLite needs the WHERE to parse an upsert after a SELECT
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("registering mirror sink %s: %w", sink, err)
	}
	return o, nil
}

func newOwner() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// tx runs fn in one write transaction (store.DB.Write: immediate on SQLite,
// serializable on PostgreSQL, retried when it loses a race): registering a
// sink, recording an outcome, and claiming on SQLite.
func (o *Outbox) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return o.db.Write(ctx, fn)
}

// Claim leases up to n due rows. Within one agent thread only the oldest
// pending row is ever handed out, so a thread's messages are processed in
// order (each can thread onto the ones before it, and a digest stays
// ordered) while different threads proceed in parallel. Two workers in any
// processes never claim one row (see claim and claimPostgres).
func (o *Outbox) Claim(ctx context.Context, n int) ([]Item, error) {
	// An idle poll must not take the write lock that agents' sends queue
	// on: look first, outside any transaction (WAL readers never block).
	var due int
	err := o.db.QueryRowContext(ctx, o.db.Rebind(`SELECT count(*) FROM (SELECT 1 AS one FROM am_mirror_outbox
		WHERE sink = ?1 AND next_us <= ?2 AND (lease_until_us IS NULL OR lease_until_us <= ?2) LIMIT 1) AS due`),
		o.sink, o.now().UnixMicro()).Scan(&due)
	if err != nil || due == 0 {
		if err != nil {
			err = fmt.Errorf("polling %s outbox: %w", o.sink, err)
		}
		return nil, err
	}
	var items []Item
	if o.db.Dialect == store.Postgres {
		items, err = o.claimPostgres(ctx, n)
	} else {
		items, err = o.claim(ctx, n)
	}
	if err != nil {
		return nil, fmt.Errorf("claiming %s outbox rows: %w", o.sink, err)
	}
	return items, nil
}

// claim leases rows in one immediate transaction: on SQLite writers run one
// at a time, so what it selects is still due when it updates.
func (o *Outbox) claim(ctx context.Context, n int) ([]Item, error) {
	var items []Item
	err := o.tx(ctx, func(tx *sql.Tx) error {
		items = items[:0]
		now := o.now().UnixMicro()
		rows, err := tx.QueryContext(ctx, o.db.Rebind(`SELECT o.message_id, o.project_id, o.thread_key, o.attempts
			FROM am_mirror_outbox o
			WHERE o.sink = ?1 AND o.next_us <= ?2 AND (o.lease_until_us IS NULL OR o.lease_until_us <= ?2)
			  AND NOT EXISTS (SELECT 1 FROM am_mirror_outbox p
			      WHERE p.sink = ?1 AND p.project_id = o.project_id AND p.thread_key = o.thread_key AND p.message_id < o.message_id)
			ORDER BY o.message_id LIMIT ?3`), o.sink, now, n)
		if err != nil {
			return err
		}
		if items, err = scanItems(rows, items); err != nil {
			return err
		}
		until := o.now().Add(o.lease).UnixMicro()
		for i, it := range items {
			claim := o.claimID()
			if _, err := tx.ExecContext(ctx, o.db.Rebind(`UPDATE am_mirror_outbox SET lease_owner = ?, lease_until_us = ?, attempts = attempts + 1
				WHERE sink = ? AND message_id = ?`), claim, until, o.sink, it.MessageID); err != nil {
				return err
			}
			items[i].Attempts++ // as the row now says
			items[i].claim = claim
		}
		return nil
	})
	return items, err
}

// claimPostgres leases rows the way PostgreSQL serves a work queue: one
// READ COMMITTED statement that locks the due rows FOR UPDATE SKIP LOCKED.
// Workers of every server poll the one outbox; as serializable transactions
// their claims all read the same rows and kept failing one another
// (thousands of serialization failures a minute in the fleet test). Here a
// row another worker is claiming is skipped, and one it has just claimed is
// re-checked against its committed lease before it is taken, so no row is
// ever leased twice. The NOT EXISTS still sees rows being claimed (a plain
// read skips nothing), so a thread's newer message waits for its older one.
func (o *Outbox) claimPostgres(ctx context.Context, n int) ([]Item, error) {
	var items []Item
	err := o.db.Retry(ctx, func() error {
		items = items[:0]
		// Explicitly: the server's default_transaction_isolation may be higher.
		tx, err := o.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		now := o.now()
		claim := o.claimID() // one per statement: its rows are released one by one, by the lane that holds each
		rows, err := tx.QueryContext(ctx, `UPDATE am_mirror_outbox u
			SET lease_owner = $1, lease_until_us = $2, attempts = u.attempts + 1
			FROM (SELECT o.message_id FROM am_mirror_outbox o
				WHERE o.sink = $3 AND o.next_us <= $4 AND (o.lease_until_us IS NULL OR o.lease_until_us <= $4)
				  AND NOT EXISTS (SELECT 1 FROM am_mirror_outbox p
				      WHERE p.sink = $3 AND p.project_id = o.project_id AND p.thread_key = o.thread_key AND p.message_id < o.message_id)
				ORDER BY o.message_id LIMIT $5
				FOR UPDATE SKIP LOCKED) c
			WHERE u.sink = $3 AND u.message_id = c.message_id
			RETURNING u.message_id, u.project_id, u.thread_key, u.attempts`,
			claim, now.Add(o.lease).UnixMicro(), o.sink, now.UnixMicro(), n)
		if err != nil {
			return err
		}
		if items, err = scanItems(rows, items); err != nil {
			return err
		}
		for i := range items {
			items[i].claim = claim
		}
		return tx.Commit()
	})
	slices.SortFunc(items, func(a, b Item) int { return cmp.Compare(a.MessageID, b.MessageID) })
	return items, err
}

// scanItems appends the outbox rows of a claim's query to dst and closes rows.
func scanItems(rows *sql.Rows, dst []Item) ([]Item, error) {
	items, err := store.Collect(rows, func(row store.Scanner) (Item, error) {
		var it Item
		err := row.Scan(&it.MessageID, &it.ProjectID, &it.ThreadKey, &it.Attempts)
		return it, err
	})
	return append(dst, items...), err
}

// Done records the outcome of it (record runs in the same transaction,
// may be nil) and removes the row. It removes the row even when this
// worker's lease has lapsed: the work is done and recorded, and record must
// therefore be idempotent (ON CONFLICT DO NOTHING).
func (o *Outbox) Done(ctx context.Context, it Item, record func(context.Context, *sql.Tx) error) error {
	err := o.tx(ctx, func(tx *sql.Tx) error {
		if record != nil {
			if err := record(ctx, tx); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, o.db.Rebind(`DELETE FROM am_mirror_outbox WHERE sink = ? AND message_id = ?`), o.sink, it.MessageID)
		return err
	})
	if err != nil {
		return fmt.Errorf("completing %s outbox row %d: %w", o.sink, it.MessageID, err)
	}
	return nil
}

// Retry releases it for another attempt after delay, keeping cause for
// diagnosis. Only the holder of its claim may do so: a lapsed lease means
// another claim, of this worker or another, owns the row now.
func (o *Outbox) Retry(ctx context.Context, it Item, delay time.Duration, cause error) error {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	err := o.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, o.db.Rebind(`UPDATE am_mirror_outbox SET lease_owner = NULL, lease_until_us = NULL, next_us = ?, last_error = ?
			WHERE sink = ? AND message_id = ? AND lease_owner = ?`),
			o.now().Add(delay).UnixMicro(), msg, o.sink, it.MessageID, it.claim)
		return err
	})
	if err != nil {
		return fmt.Errorf("rescheduling %s outbox row %d: %w", o.sink, it.MessageID, err)
	}
	return nil
}

// Pending is the number of rows not yet done, for health checks and tests.
func (o *Outbox) Pending(ctx context.Context) (int, error) {
	var n int
	if err := o.db.QueryRowContext(ctx, o.db.Rebind(`SELECT count(*) FROM am_mirror_outbox WHERE sink = ?`), o.sink).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting %s outbox rows: %w", o.sink, err)
	}
	return n, nil
}

// SetClock makes o read the time from now instead of time.Now: a test
// then lapses a lease, or skips a delay, when it says rather than when a
// loaded machine happens to be slow. Set it before the first claim.
func (o *Outbox) SetClock(now func() time.Time) { o.now = now }

// Lease is how long a claim lasts.
func (o *Outbox) Lease() time.Duration { return o.lease }
