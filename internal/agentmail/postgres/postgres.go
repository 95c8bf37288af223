// Package postgres stores agent mail in a PostgreSQL database shared by
// mailgate servers on many hosts. It implements the same storage port as
// agentmail/sqlite, with the same tables and columns (so SQL that reads them
// directly, such as internal/mirror's, runs on both), and the same answers.
//
// Safety between servers comes from store.DB: every write is one
// SERIALIZABLE transaction (file reservations' grants, releases and
// renewals excepted: see WriteCommitted, GrantOwn and agentmail.Service.Reserve), run again when PostgreSQL reports that it lost a
// race (serialization failure or deadlock), so the outcome is as if all
// writes of all servers ran one at a time, which is what SQLite's single
// writer gives the other implementation. Within one process, a transaction
// that lost a race runs again while the process's new writers wait (see
// Store.Write), so a burst of conflicting writers converges instead of
// colliding until the retries run out. Reads run on one REPEATABLE READ
// snapshot and never wait; a read whose statements need no common snapshot
// (ReadEach: fetch_inbox, search_messages, a grant's conflicts) runs them
// without a transaction. Every transaction here sends its BEGIN with its
// first statement (store.WithDeferredBegin). There is no group commit and no statement cache
// here: pgx caches prepared statements per connection.
//
// The statements both engines share, and the Go around them, are written
// once in agentmail/amsql; this package keeps what PostgreSQL does its own
// way: the transactions above, tsvector search, the one-statement send,
// TouchAgent after the commit, and the fragments of its amsql.Dialect.
//
// Where the behaviour differs from SQLite:
//
//   - Full-text search uses a tsvector ('simple' configuration, PostgreSQL's
//     default parser) instead of FTS5's unicode61 tokenizer with
//     remove_diacritics: accents are not folded ("café" does not match
//     "cafe"), and the parser keeps e-mail addresses, host names, paths and
//     numbers such as "3.14" as one token, and reads "POL-358" as "pol" and
//     "-358". Query and documents go through the same parser, so a term
//     matches wherever the same text occurs; only the edges of what counts
//     as one word differ.
//   - Relevance is ts_rank_cd (cover density; a subject hit weighs 1.0, a
//     body hit 0.4) instead of bm25, so equally relevant results may come in
//     another order.
//   - A prefix on a term the parser splits ("POL-358"*) applies to each of
//     its tokens; FTS5 applies it to the last one only.
//   - A query whose every positive term the parser drops (leaving only
//     exclusions) matches nothing, rather than reading the whole table.
//   - A body with more distinct words than a tsvector holds (1 MB) is
//     indexed on its first 65536 characters (see 0001_init.sql).
//   - The LIKE fallback is ILIKE, which folds case beyond ASCII; SQLite's
//     LIKE folds ASCII letters only.
//   - A unique-constraint failure may be a lost race that SERIALIZABLE does
//     not report as one (PostgreSQL documents this for keys chosen after
//     reading the table): Write runs the transaction again a few times
//     before reporting agentmail.ErrConflict. On SQLite writers never
//     overlap, so the case does not arise.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// conflictAttempts bounds how often Write runs a transaction again after a
// unique-constraint failure. One more run is enough after a lost race (the
// winner has committed when PostgreSQL reports the violation, so the next
// run sees its row); the others cover further racers.
const conflictAttempts = 3

// queueDepth is how many writers of one process may wait on one scope's
// advisory lock with a connection each (see writeQueued).
const queueDepth = 8

// Store implements agentmail.Store on a PostgreSQL store.DB.
type Store struct {
	db *store.DB
	// lane orders this process's writers under contention (see Write):
	// first attempts share it, a transaction that lost a race holds it
	// alone while it runs again.
	lane sync.RWMutex
	// queues bound this process's writers waiting on each scope's lock
	// (see writeQueued): scope key → chan struct{} of queueDepth slots.
	queues sync.Map
	// analyze keeps am_messages's statistics up with the sends (analyze.go).
	analyze analyzer
}

var (
	_ agentmail.Store           = (*Store)(nil)
	_ agentmail.ScopedWriter    = (*Store)(nil)
	_ agentmail.CommittedWriter = (*Store)(nil)
	_ agentmail.EachReader      = (*Store)(nil)
	_ agentmail.Tx              = (*tx)(nil)
)

// Open applies the agent-mail migrations to db and returns the store. The
// caller keeps ownership of db; Close does not close it.
func Open(ctx context.Context, db *store.DB) (*Store, error) {
	if db.Dialect != store.Postgres {
		return nil, fmt.Errorf("opening agent-mail store: %s is not a PostgreSQL database", db.Where)
	}
	if err := amsql.Migrate(ctx, db); err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close ends the store's background analyze, if one runs; the DB belongs
// to the caller.
func (s *Store) Close() error {
	s.analyze.stop()
	return nil
}

// Write runs fn in one serializable transaction.
//
// Writers that touch the same rows or ranges (channel agents claiming files
// in one project, two sweeps retiring one agent) make PostgreSQL fail all but one
// of them with a serialization error; the others must run again. Run again
// blindly, a dozen goroutines of one busy process keep colliding until
// store.DB's retry budget is spent. So a first attempt runs concurrently with
// the process's other writers, and a transaction that lost a race runs its
// retries (store.DB.Write: serializable, retried with back-off) holding the
// lane alone: new writers of this process wait for it, and it only has
// other servers' transactions left to race. Without contention this costs
// one uncontended RLock per write.
//
// A unique-constraint failure is retried the same way a few times, since
// under SERIALIZABLE it can also mean a lost race (see the package
// comment); if it persists it is reported as agentmail.ErrConflict.
func (s *Store) Write(ctx context.Context, fn func(agentmail.Tx) error) error {
	return s.write(ctx, own(fn))
}

// own is fn on the store's own transaction.
func own(fn func(agentmail.Tx) error) func(*tx) error { return func(t *tx) error { return fn(t) } }

// write is Write with the store's own transaction (WriteSQL uses it).
func (s *Store) write(ctx context.Context, fn func(*tx) error) error {
	ctx = store.WithDeferredBegin(ctx) // BEGIN goes with the first statement
	if lost, err := s.firstAttempt(ctx, fn); !lost {
		return err
	}
	s.lane.Lock()
	defer s.lane.Unlock()
	for attempt := 1; ; attempt++ {
		var last *tx
		err := s.db.Write(ctx, func(sqltx *sql.Tx) error {
			var err error
			last, err = runTx(sqltx, fn)
			return err
		})
		if err == nil {
			s.touch(ctx, s.db, last)
		}
		if attempt == conflictAttempts || !errors.Is(err, agentmail.ErrConflict) || ctx.Err() != nil {
			return err
		}
	}
}

// touch records the agents' activity that the committed transaction t
// noted (TouchAgent), each in one statement of its own outside any
// SERIALIZABLE transaction.
//
// last_active_us is a heartbeat that every send and reservation moves
// forward, and that other writers read (a send reads its recipients' rows):
// written inside the serializable transactions, two agents sending to each
// other at once read each other's row and write their own, a cycle that
// PostgreSQL breaks by failing one of them, which under load was most of
// the sends' retries. Written here, after the commit, in autocommit (READ
// COMMITTED), it takes part in no such cycle; the condition keeps it
// monotonic, so a late or lost write (the process died in between) leaves
// the time a moment older, never newer. The cost is one round trip per
// touching write, and only when the transaction asked for one: sends touch
// at most once a second per agent, reads once a minute. (READ COMMITTED
// writers, which take part in no such cycle, write it inside their own
// transaction instead: see writeCommitted.)
//
// on is where the statement runs: the pool, or the connection a scoped
// writer holds (taking a second one from the pool there could wait forever
// for connections held by writers queued behind this one).
func (s *Store) touch(ctx context.Context, on execer, t *tx) {
	if t == nil {
		return
	}
	if t.inserts > 0 {
		s.inserted(t.inserts)
	}
	ctx = context.WithoutCancel(ctx) // the transaction committed: its heartbeat belongs with it
	for id, at := range t.touches {
		on.ExecContext(ctx, queries().TouchAgentSQL(), amsql.US(at), id) // best effort: see above
	}
}

// TouchAgent notes the agent's activity; the store writes it once the
// transaction has committed (see Store.touch), or just before a READ
// COMMITTED writer commits (see writeCommitted), where SQLite writes it
// inside the transaction (amsql.Tx.TouchAgent).
func (t *tx) TouchAgent(ctx context.Context, agentID int64, at time.Time) error {
	if t.touches == nil {
		t.touches = map[int64]time.Time{}
	}
	if at.After(t.touches[agentID]) {
		t.touches[agentID] = at
	}
	return nil
}

// WriteCommitted runs fn in one READ COMMITTED transaction (see
// agentmail.CommittedWriter), outside the lane: it cannot fail with a
// serialization error, nor make a serializable writer fail. It runs again
// only after a deadlock (which PostgreSQL reports as retryable).
func (s *Store) WriteCommitted(ctx context.Context, fn func(agentmail.Tx) error) error {
	return s.writeCommitted(ctx, own(fn))
}

// writeCommitted is WriteCommitted with the store's own transaction
// (WriteCommittedSQL uses it).
func (s *Store) writeCommitted(ctx context.Context, fn func(*tx) error) error {
	ctx = store.WithDeferredBegin(ctx) // BEGIN goes with the first statement
	return s.db.Retry(ctx, func() error {
		sqltx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return fmt.Errorf("beginning transaction: %w", err)
		}
		defer sqltx.Rollback()
		t := newTx(sqltx)
		if err := fn(t); err != nil {
			return err
		}
		if t.failed != nil {
			return fmt.Errorf("a statement failed inside the transaction: %w", t.failed)
		}
		// The heartbeat goes in this transaction, not after it as a
		// serializable writer's does (see Store.touch): at READ COMMITTED
		// it enters no serializable writer's conflict graph, and here it
		// costs a statement where after the commit it cost a transaction of
		// its own and a second WAL flush (a grant and its release touch
		// every time).
		for id, at := range t.touches {
			if _, err := t.exec(ctx, queries().TouchAgentSQL(), amsql.US(at), id); err != nil {
				return err
			}
		}
		if err := sqltx.Commit(); err != nil {
			return fmt.Errorf("committing transaction: %w", err)
		}
		return nil
	})
}

// reservationLockKey is the advisory lock key of a project's reservations:
// the key of its agentmail.ReservationScope, so that writers queued on that
// scope (a channel claim, serializable) and grants exclude each other.
func reservationLockKey(projectID int64) int64 {
	return scopeKey(agentmail.ReservationScope(projectID).Key)
}

// WriteScoped is Write for writers that contend on one resource (see
// agentmail.ScopedWriter). Queueing is a session advisory lock keyed by the
// scope, taken before BEGIN on the connection the transaction then runs on,
// so writers of every server on that resource run one after the other
// instead of failing one another with serialization errors and running
// again. The lock must come before BEGIN: a SERIALIZABLE transaction's
// snapshot is taken at its first statement, so a lock taken inside it
// would leave the previous holder's commit invisible and fail anyway. The
// transaction itself is unchanged (SERIALIZABLE, retried when it loses a
// race to a writer outside the scope), so every guarantee of Write holds
// whether or not all writers queue.
//
// With scope.Always every writer queues; otherwise the first attempt runs
// as Write's does and only a writer that lost a race queues.
func (s *Store) WriteScoped(ctx context.Context, scope agentmail.Scope, fn func(agentmail.Tx) error) error {
	return s.writeScoped(ctx, scope, own(fn))
}

// writeScoped is WriteScoped with the store's own transaction.
func (s *Store) writeScoped(ctx context.Context, scope agentmail.Scope, fn func(*tx) error) error {
	ctx = store.WithDeferredBegin(ctx) // BEGIN goes with the first statement (after the queue's lock)
	if !scope.Always {
		if lost, err := s.firstAttempt(ctx, fn); !lost {
			return err
		}
	}
	return s.writeQueued(ctx, scope.Key, fn)
}

// writeQueued runs fn under the advisory lock of scope (see WriteScoped).
//
// At most queueDepth writers of this process wait on one scope's advisory
// lock, each holding a pool connection; the others wait in memory without
// one. A queue of waiters each holding a connection would empty the pool for
// everyone; a queue of one would add a hand-over (a connection, a lock round
// trip) between every two writers, where PostgreSQL hands the lock from one
// waiting connection to the next at once.
func (s *Store) writeQueued(ctx context.Context, scope string, fn func(*tx) error) error {
	q, _ := s.queues.LoadOrStore(scope, make(chan struct{}, queueDepth))
	slots := q.(chan struct{})
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slots }()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("taking a connection: %w", err)
	}
	key := scopeKey(scope)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // the lock may be held or pending: never reuse this connection
		conn.Close()
		return fmt.Errorf("queueing for %s: %w", scope, err)
	}
	released := false
	defer func() {
		if !released { // fn panicked: dropping the connection releases the lock
			conn.Raw(func(any) error { return driver.ErrBadConn })
			conn.Close()
		}
	}()
	var last *tx
	for attempt := 1; ; attempt++ {
		err = s.db.Retry(ctx, func() error {
			var err error
			last, err = s.attemptOn(ctx, conn, fn)
			return err
		})
		if attempt == conflictAttempts || !errors.Is(err, agentmail.ErrConflict) || ctx.Err() != nil {
			break
		}
	}
	// The lock is the session's: a connection back in the pool still
	// holding it would stall the scope. Unlock even when ctx has ended; if
	// that fails, close the connection (which releases it). The heartbeat
	// waits until the queue has moved on.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, uerr := conn.ExecContext(uctx, `SELECT pg_advisory_unlock($1)`, key); uerr != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn })
	} else if err == nil {
		s.touch(ctx, conn, last)
	}
	released = true
	conn.Close()
	return err
}

// scopeKey is the advisory lock key of a scope: 64 bits of its FNV-1a hash.
func scopeKey(scope string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentmail scope\x00" + scope))
	return int64(h.Sum64())
}

// beginner begins transactions: the pool (*store.DB) or one connection.
type beginner interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}

// attemptOn runs fn once in a write transaction on conn and commits it.
// It returns the committed transaction's state (see Store.touch).
func (s *Store) attemptOn(ctx context.Context, conn beginner, fn func(*tx) error) (*tx, error) {
	sqltx, err := conn.BeginTx(ctx, s.db.WriteOptions())
	if err != nil {
		return nil, fmt.Errorf("beginning transaction: %w", err)
	}
	defer sqltx.Rollback()
	t, err := runTx(sqltx, fn)
	if err != nil {
		return nil, err
	}
	if err := sqltx.Commit(); err != nil {
		return nil, fmt.Errorf("committing transaction: %w", err)
	}
	return t, nil
}

// firstAttempt runs fn once, beside this process's other writers (see
// Write). lost reports a failure that running fn again may mend: a lost
// race (a serialization failure) or a unique-constraint failure.
func (s *Store) firstAttempt(ctx context.Context, fn func(*tx) error) (lost bool, err error) {
	s.lane.RLock()
	defer s.lane.RUnlock()
	t, err := s.attemptOn(ctx, s.db, fn)
	if err == nil {
		s.touch(ctx, s.db, t)
		return false, nil
	}
	return ctx.Err() == nil && (s.db.Retryable(err) || errors.Is(err, agentmail.ErrConflict)), err
}

// Read runs fn on one consistent read-only snapshot.
func (s *Store) Read(ctx context.Context, fn func(agentmail.Tx) error) error {
	return s.read(ctx, own(fn), false)
}

// read is Read with the store's own transaction (ReadSQL uses it).
//
// A read's full-text search runs without the savepoint that lets the
// Service fall back to a LIKE search in the same transaction (see
// tx.savepoint): a search's SAVEPOINT and RELEASE were two of its five
// round trips, for a statement that does not fail (Tsquery renders any
// query as a valid tsquery). Should it fail all the same, the transaction
// is aborted, so the read runs again, once, with the savepoint. guarded:
// with the savepoint from the start.
func (s *Store) read(ctx context.Context, fn func(*tx) error, guarded bool) error {
	ctx = store.WithDeferredBegin(ctx) // BEGIN goes with the first statement
	for {
		var searchFailed bool
		err := s.db.Read(ctx, func(sqltx *sql.Tx) error {
			t := newTx(sqltx)
			t.unguarded = !guarded
			err := t.run(fn)
			searchFailed = t.searchFailed
			return err
		})
		if err == nil || guarded || !searchFailed || ctx.Err() != nil {
			return err
		}
		guarded = true
	}
}

// ReadEach runs fn's statements on the pool, each in its own implicit
// transaction (see agentmail.EachReader): a read of one or two statements
// saves its BEGIN and COMMIT, two round trips. Its search runs without the
// savepoint (there is no transaction to keep usable); should a statement
// fail all the same, the read runs again as Read runs it, in a transaction.
func (s *Store) ReadEach(ctx context.Context, fn func(agentmail.Tx) error) error {
	t := newTx(s.db.DB)
	t.unguarded = true
	err := t.run(own(fn))
	if err == nil || t.failed == nil || ctx.Err() != nil {
		return err
	}
	return s.read(ctx, own(fn), true)
}

// runTx is tx.run on a new transaction, returning the transaction's state
// for after its commit.
func runTx(sqltx *sql.Tx, fn func(*tx) error) (*tx, error) {
	t := newTx(sqltx)
	if err := t.run(fn); err != nil {
		return nil, err
	}
	return t, nil
}

// querier runs statements: *sql.Tx, or the pool (*sql.DB) for ReadEach.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// newTx is the store's transaction on sqltx.
func newTx(sqltx querier) *tx {
	t := &tx{tx: sqltx}
	t.Tx = amsql.NewTx(t, queries())
	return t
}

// run calls fn on t, and fails if one of its statements failed even
// though fn went on. On PostgreSQL a failed statement aborts the whole
// transaction; had the Service swallowed its error, COMMIT would answer a
// bare ROLLBACK (pgx: "commit unexpectedly resulted in rollback"), which
// hides the cause and which no retry recognises. Returned here instead, a
// serialization failure keeps its SQLSTATE and the transaction runs again.
func (t *tx) run(fn func(*tx) error) error {
	if err := fn(t); err != nil {
		return err
	}
	if t.failed != nil {
		return fmt.Errorf("a statement failed inside the transaction: %w", t.failed)
	}
	return nil
}

// tx implements agentmail.Tx on one transaction: the statements both
// engines share through amsql.Tx, run by the Querier below, and the ones
// that are PostgreSQL's own (InsertMessage, Search, TouchAgent); the tool
// sets' statements run on it too (WriteSQL).
type tx struct {
	amsql.Tx
	tx     querier // the transaction, or the pool (ReadEach)
	failed error   // the first statement error since the last savepoint rollback (see run)
	// unguarded: Search runs its statement without a savepoint (see
	// Store.read); searchFailed: it failed so.
	unguarded, searchFailed bool
	// touches are the agents' activity times to record after the commit
	// (see Store.touch), in writes only.
	touches map[int64]time.Time
	// inserts counts the messages the transaction inserted (see analyzer).
	inserts int
}

// note records a statement's failure (sql.ErrNoRows is an answer, not one).
func (t *tx) note(err error) error {
	if err != nil && t.failed == nil && !errors.Is(err, sql.ErrNoRows) {
		t.failed = err
	}
	return err
}

func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	return res, dialect.MapErr(t.note(err))
}

func (t *tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return rows, dialect.MapErr(t.note(err))
}

func (t *tx) queryRow(ctx context.Context, query string, args ...any) row {
	return row{t.tx.QueryRowContext(ctx, query, args...), t}
}

// Exec, Query and QueryRow implement amsql.Querier.
func (t *tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.exec(ctx, query, args...)
}

func (t *tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.query(ctx, query, args...)
}

func (t *tx) QueryRow(ctx context.Context, query string, args ...any) amsql.Row {
	return t.queryRow(ctx, query, args...)
}

// row is a *sql.Row whose Scan error is noted on its transaction.
type row struct {
	r *sql.Row
	t *tx
}

func (r row) Scan(dest ...any) error { return r.t.note(r.r.Scan(dest...)) }

// insertID runs an INSERT … RETURNING id.
func (t *tx) insertID(ctx context.Context, query string, args ...any) (int64, error) {
	var id int64
	if err := t.queryRow(ctx, query, args...).Scan(&id); err != nil {
		return 0, dialect.MapErr(err)
	}
	return id, nil
}

// dialect is where PostgreSQL's statements differ from SQLite's.
var dialect = amsql.Dialect{
	Numbered: true,
	// A list travels as one array parameter, which = ANY matches against
	// the index element by element (SQLite, without arrays, reads JSON).
	InIDs:      func(col, ph string) string { return col + ` = ANY(` + ph + `::bigint[])` },
	IDs:        func(ids []int64) any { return ids },
	InStrings:  func(col, ph string) string { return col + ` = ANY(` + ph + `::text[])` },
	Strings:    func(ss []string) any { return ss },
	EachString: func(ph string) string { return `unnest(` + ph + `::text[]) AS j(value)` },
	// PostgreSQL's max is an aggregate only.
	Greatest: "greatest",
	// PostgreSQL's LIKE heeds case, where SQLite's ignores ASCII case;
	// ILIKE ignores it (beyond ASCII too: see the package comment).
	Like: "ILIKE",
	// The planner starts from the thread on its own (and CROSS JOIN … ON,
	// SQLite's hint, is not PostgreSQL syntax).
	ThreadJoin: "JOIN",
	// The unique index am_agents_name is on lower(name) under the column's
	// "C" collation (ASCII folding only, as SQLite's NOCASE); the same
	// expression makes the lookup probe it.
	AgentName: `lower(name) = lower(?::text COLLATE "C")`,
	Unique:    store.IsUniqueViolation,
}

// queries are the shared statements, as PostgreSQL runs them (built on
// first use: a process on SQLite never needs them).
var queries = sync.OnceValue(func() *amsql.Queries { return amsql.New(dialect) })

// execer runs a statement: *store.DB (the pool) or *sql.Conn.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// WriteSQL and ReadSQL are the store's amsql.Runner, on which the tool
// sets beside the core (agentmail/channels, agentmail/mailboxset) run the
// SQL of their own tables, by the same Write (serializable, retried) and
// Read as the store's own transactions. Their queries are written in
// SQLite's placeholders, which PostgreSQL does not take: each is rebound
// to $N. Every statement goes through tx's own methods, so a failure is
// noted on the transaction (see run).
func (s *Store) WriteSQL(ctx context.Context, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.write(ctx, func(t *tx) error { return fn(t, statements(t)) })
}

// WriteScopedSQL is WriteSQL queued on scope as WriteScoped queues.
func (s *Store) WriteScopedSQL(ctx context.Context, scope agentmail.Scope, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.writeScoped(ctx, scope, func(t *tx) error { return fn(t, statements(t)) })
}

// ReadSQL: see WriteSQL.
func (s *Store) ReadSQL(ctx context.Context, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.read(ctx, func(t *tx) error { return fn(t, statements(t)) }, false)
}

func statements(t *tx) amsql.Querier {
	return amsql.Statements{ExecFn: t.Exec, QueryFn: t.Query, QueryRowFn: t.QueryRow, Rebind: amsql.PostgresRebind}
}
