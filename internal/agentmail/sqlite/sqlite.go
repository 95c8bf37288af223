// Package sqlite stores agent mail in mailgate's shared SQLite file.
//
// Many mailgate processes (one per agent, each started by its client) open
// the same file. Safety comes from three rules: every write is one short
// BEGIN IMMEDIATE transaction (the store's connection default), so writers
// queue on SQLite's lock instead of deadlocking; writers of one process queue
// on a process-local semaphore first, so they never burn SQLite's busy
// back-off against each other; and a transaction that still meets a lock
// error is retried a few times with jitter, so no lock error reaches an
// agent. Writes that arrive together in one process share a transaction
// (group commit, see Write). Reads run in deferred read-only transactions,
// which WAL never blocks. New messages reach the full-text index in batches,
// after their commit (see indexer.go).
//
// The statements both engines share, and the Go around them, are written
// once in agentmail/amsql; this package keeps what SQLite does its own way:
// the transactions above, the statement cache, FTS5 search, the insert of a
// message and its copies, and the fragments of its amsql.Dialect.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// Store implements agentmail.Store on a store.DB.
type Store struct {
	db        *store.DB
	wsem      chan struct{} // held by the goroutine running write batches
	qmu       sync.Mutex
	queue     []*writeReq // writes waiting for the next batch
	mu        sync.Mutex
	stmts     map[string]*sql.Stmt
	preparing map[string]bool // queries being prepared store-wide in the background
	prep      sync.WaitGroup  // those background preparations: Close waits for them
	closed    bool
	log       *slog.Logger
	idx       *indexer
}

var _ agentmail.Store = (*Store)(nil)

// Open applies the agent-mail migrations to db and returns the store. The
// caller keeps ownership of db; Close does not close it.
func Open(ctx context.Context, db *store.DB) (*Store, error) {
	if err := amsql.Migrate(ctx, db); err != nil {
		return nil, err
	}
	return &Store{db: db, wsem: make(chan struct{}, 1), stmts: map[string]*sql.Stmt{}, preparing: map[string]bool{},
		log: slog.New(slog.DiscardHandler), idx: newIndexer()}, nil
}

// NewService opens the store on db and builds the Service over it.
func NewService(ctx context.Context, db *store.DB, opts agentmail.Options) (*agentmail.Service, error) {
	st, err := Open(ctx, db)
	if err != nil {
		return nil, err
	}
	return agentmail.New(st, opts)
}

// SetLogger sets where failures of background work (indexing) are reported;
// agentmail.New hands over the service's logger.
func (s *Store) SetLogger(l *slog.Logger) { s.log = l }

// Close stops the indexer, indexes what this process left queued and
// releases the prepared statements (the DB stays open).
func (s *Store) Close() error {
	s.stopIndexer()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	// A statement still being prepared in the background holds a pool
	// connection; it must be done (and closed, s.closed) before the caller
	// closes the DB, or that connection outlives it and touches the files
	// (-wal, -shm) after the store was closed.
	s.prep.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for q, st := range s.stmts {
		st.Close()
		delete(s.stmts, q)
	}
	return nil
}

// Write runs fn in an immediate transaction, retrying lock errors.
//
// Writes of one process are group-committed: while one batch commits, the
// calls that arrive queue up, and the next batch runs them all in one
// transaction, each inside its own SAVEPOINT so that a failing call rolls
// back alone. One commit (one WAL append, one full-text flush) then serves
// many sends, which is what keeps a busy client far above the per-commit
// rate. A lone call runs in a transaction of its own, with no savepoint.
func (s *Store) Write(ctx context.Context, fn func(agentmail.Tx) error) error {
	return s.write(ctx, func(t *tx) error { return fn(t) })
}

// write is Write with the store's own transaction (WriteSQL uses it).
func (s *Store) write(ctx context.Context, fn func(*tx) error) error {
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, req)
	s.qmu.Unlock()
	for {
		select {
		case err := <-req.done:
			return err
		case s.wsem <- struct{}{}:
			// Leader: run queued batches until ours is through.
			for {
				select {
				case err := <-req.done:
					<-s.wsem
					return err
				default:
				}
				s.qmu.Lock()
				batch := s.queue
				if len(batch) > maxBatch {
					batch = batch[:maxBatch]
				}
				s.queue = s.queue[len(batch):]
				s.qmu.Unlock()
				if len(batch) == 0 {
					break // ours was taken by the previous leader
				}
				s.runBatch(batch)
			}
			<-s.wsem
		}
	}
}

// maxBatch bounds how many calls share one transaction, so none waits long.
const maxBatch = 64

type writeReq struct {
	ctx  context.Context
	fn   func(*tx) error
	done chan error
}

// runBatch runs a batch to completion and answers every request in it.
func (s *Store) runBatch(batch []*writeReq) {
	var errs []error
	err := s.retry(context.Background(), func() (err error) {
		errs, err = s.runOnce(batch)
		return err
	})
	for i, r := range batch {
		if err != nil {
			r.done <- err
		} else {
			r.done <- errs[i]
		}
	}
}

func (s *Store) runOnce(batch []*writeReq) ([]error, error) {
	ctx := context.Background() // one caller giving up must not abort the others
	sqltx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("beginning transaction: %w", err)
	}
	defer sqltx.Rollback()
	t := newTx(s, sqltx)
	t.batch = true
	errs := make([]error, len(batch))
	single := len(batch) == 1
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if !single {
			if _, err := sqltx.ExecContext(ctx, `SAVEPOINT w`); err != nil {
				return nil, err
			}
		}
		errs[i] = r.fn(t)
		if store.IsBusy(errs[i]) {
			return nil, errs[i] // retry the whole batch
		}
		if single {
			if errs[i] != nil {
				return errs, nil // nothing to commit
			}
			continue
		}
		if errs[i] != nil {
			if _, err := sqltx.ExecContext(ctx, `ROLLBACK TO w`); err != nil {
				return nil, err
			}
		}
		if _, err := sqltx.ExecContext(ctx, `RELEASE w`); err != nil {
			return nil, err
		}
	}
	if err := sqltx.Commit(); err != nil {
		return nil, fmt.Errorf("committing transaction: %w", err)
	}
	if t.queued {
		s.indexSoon()
	}
	return errs, nil
}

// Read runs fn in a read-only (deferred) transaction.
func (s *Store) Read(ctx context.Context, fn func(agentmail.Tx) error) error {
	return s.read(ctx, func(t *tx) error { return fn(t) })
}

// read is Read with the store's own transaction (ReadSQL uses it).
func (s *Store) read(ctx context.Context, fn func(*tx) error) error {
	return s.retry(ctx, func() error { return s.run(ctx, &sql.TxOptions{ReadOnly: true}, fn) })
}

// retry runs a transaction again after a lock error that outlived the busy
// timeout (rare: the timeout is 30 s), under the store's one policy.
func (s *Store) retry(ctx context.Context, f func() error) error { return s.db.Retry(ctx, f) }

func (s *Store) run(ctx context.Context, opts *sql.TxOptions, fn func(*tx) error) error {
	sqltx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", err)
	}
	defer sqltx.Rollback()
	if err := fn(newTx(s, sqltx)); err != nil {
		return err
	}
	if err := sqltx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// cached returns the store-wide prepared statement for query, if there is
// one yet.
func (s *Store) cached(query string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stmts[query]
}

// queryDB runs query outside a transaction, on the store-wide prepared
// statement once there is one: the checks every search makes first
// (IndexPendingFor) would otherwise prepare their statement per call.
func (s *Store) queryDB(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.cached(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	s.prepareLater(query)
	return s.db.QueryContext(ctx, query, args...)
}

// prepareLater prepares query store-wide in the background, for the next
// transactions. It must never run inside a transaction: preparing needs a
// pool connection of its own, and a transaction that waits for a second
// connection while every other connection belongs to a transaction doing
// the same deadlocks the pool (seen with 30 agents arriving at once).
func (s *Store) prepareLater(query string) {
	s.mu.Lock()
	if s.stmts[query] != nil || s.preparing[query] || s.closed {
		s.mu.Unlock()
		return
	}
	s.preparing[query] = true
	s.prep.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.prep.Done()
		st, err := s.db.PrepareContext(context.Background(), query)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.preparing, query)
		if err != nil {
			return // the next use prepares it on its transaction again
		}
		if s.closed {
			st.Close()
			return
		}
		s.stmts[query] = st
	}()
}

// tx implements agentmail.Tx on one SQL transaction: the statements both
// engines share through amsql.Tx, run by the Querier below, and the ones
// that are SQLite's own (InsertMessage, Search); it is also the Querier of
// the tool sets' statements (WriteSQL).
type tx struct {
	amsql.Tx
	s  *Store
	tx *sql.Tx
	// queued: a message was stored, so the full-text queue grew.
	queued bool
	// batch: a write batch's transaction (runOnce), whose statements run to
	// completion whatever their caller's context (see stmt).
	batch bool
}

var _ amsql.Querier = (*tx)(nil)

func newTx(s *Store, sqltx *sql.Tx) *tx {
	t := &tx{s: s, tx: sqltx}
	t.Tx = amsql.NewTx(t, queries())
	return t
}

// dialect is where SQLite's statements differ from PostgreSQL's.
var dialect = amsql.Dialect{
	// A list travels as one JSON parameter read by json_each: SQLite has
	// no arrays, and one parameter keeps an IN-list in one cached statement
	// whatever its length.
	InIDs:      inJSON,
	IDs:        jsonIDs,
	InStrings:  inJSON,
	Strings:    jsonStrings,
	EachString: func(ph string) string { return `json_each(` + ph + `)` },
	// SQLite's scalar max takes several arguments (it has no greatest).
	Greatest: "max",
	// SQLite's LIKE ignores the case of ASCII letters already.
	Like: "LIKE",
	// CROSS JOIN is SQLite's way of fixing the join order: its planner
	// would otherwise start from the (possibly huge) inbox.
	ThreadJoin: "CROSS JOIN",
	// The column's NOCASE collation makes = ignore case, on the index.
	AgentName: "name = ?",
	Unique:    func(err error) bool { return strings.Contains(err.Error(), "UNIQUE constraint failed") },
}

// queries are the shared statements, as SQLite runs them, built on first
// use (a process on PostgreSQL never needs them).
var queries = sync.OnceValue(func() *amsql.Queries { return amsql.New(dialect) })

func inJSON(col, ph string) string { return col + ` IN (SELECT value FROM json_each(` + ph + `))` }

// stmt returns query's statement on this transaction's own connection, and
// the context to run it on: the store-wide statement re-bound to the
// connection when there is one, else one prepared on the transaction (never
// on another pool connection; see prepareLater).
//
// In a write batch the statements run on a context that is never done
// (context.WithoutCancel): with one that may end, modernc.org/sqlite starts
// a goroutine per statement to interrupt it (3–5% of the stdio server's
// CPU per send_message), and a write batch's statements are short, run
// under the write lock the batch holds already, and are undone with their
// call's savepoint when that call fails; a caller that gave up before its
// turn is skipped (runOnce). Reads keep their caller's context: a long
// search stops when its caller goes.
func (t *tx) stmt(ctx context.Context, query string) (context.Context, *sql.Stmt, error) {
	if t.batch {
		ctx = context.WithoutCancel(ctx)
	}
	if st := t.s.cached(query); st != nil {
		return ctx, t.tx.StmtContext(ctx, st), nil
	}
	t.s.prepareLater(query)
	st, err := t.tx.PrepareContext(ctx, query)
	return ctx, st, err
}

func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx, st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	return res, dialect.MapErr(err)
}

func (t *tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx, st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	return rows, dialect.MapErr(err)
}

func (t *tx) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	ctx, st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// Exec, Query and QueryRow implement amsql.Querier.
func (t *tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.exec(ctx, query, args...)
}

func (t *tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.query(ctx, query, args...)
}

func (t *tx) QueryRow(ctx context.Context, query string, args ...any) amsql.Row {
	row, err := t.queryRow(ctx, query, args...)
	if err != nil {
		return amsql.ErrRow{Err: err}
	}
	return row
}

// jsonStrings renders strings for json_each(?).
func jsonStrings(ss []string) any {
	b, _ := json.Marshal(ss)
	return string(b)
}

// jsonIDs renders ids for json_each(?).
func jsonIDs(ids []int64) any {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", id)
	}
	b.WriteByte(']')
	return b.String()
}

// WriteSQL and ReadSQL are the store's amsql.Runner, on which the tool
// sets beside the core (agentmail/channels, agentmail/mailboxset) run the
// SQL of their own tables: in this store's own transactions, by the same
// Write (group commit) and Read, their statements (in SQLite's
// placeholders) going through the store's prepared statements as its own
// do (see tx.stmt).
func (s *Store) WriteSQL(ctx context.Context, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.write(ctx, func(t *tx) error { return fn(t, t) })
}

// WriteScopedSQL is WriteSQL: writers queue on the file's lock already.
func (s *Store) WriteScopedSQL(ctx context.Context, _ agentmail.Scope, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.WriteSQL(ctx, fn)
}

// ReadSQL: see WriteSQL.
func (s *Store) ReadSQL(ctx context.Context, fn func(agentmail.Tx, amsql.Querier) error) error {
	return s.read(ctx, func(t *tx) error { return fn(t, t) })
}
