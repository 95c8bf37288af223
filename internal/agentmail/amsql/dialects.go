package amsql

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

// The tool sets beside the core (agentmail/channels, agentmail/mailboxset)
// keep their own tables and write their SQL once, in their packages, in
// SQLite's placeholders. An engine runs it through one small port, Runner,
// and knows nothing of the sets: the opening code (amstore) hands each set
// the engine as its Runner. The sets' queries are rebound per query on
// first use (PostgresRebind), as they are not among this package's Queries.

// Runner is an engine's port for the tool sets' SQL: WriteSQL and ReadSQL
// run fn in one of the engine's own transactions, with the guarantees of
// its Write (fn may run again) and Read, handing fn the core's Tx and a
// Querier that runs the set's statements in that transaction (through the
// engine's statement handling: its prepared statement cache, its error
// notes, its placeholders).
type Runner interface {
	WriteSQL(ctx context.Context, fn func(agentmail.Tx, Querier) error) error
	// WriteScopedSQL is WriteSQL queued on scope (agentmail.ScopedWriter);
	// an engine that does not queue runs WriteSQL.
	WriteScopedSQL(ctx context.Context, scope agentmail.Scope, fn func(agentmail.Tx, Querier) error) error
	ReadSQL(ctx context.Context, fn func(agentmail.Tx, Querier) error) error
}

// NewPort is a tool set's agentmail.Port on an engine's Runner: on makes
// the set's transaction (T) of the engine's, as the set's On does.
func NewPort[T agentmail.Tx](r Runner, on func(agentmail.Tx, Querier) T) agentmail.Port[T] {
	return port[T]{r, on}
}

type port[T agentmail.Tx] struct {
	r  Runner
	on func(agentmail.Tx, Querier) T
}

func (p port[T]) Write(ctx context.Context, fn func(T) error) error {
	return p.r.WriteSQL(ctx, func(tx agentmail.Tx, q Querier) error { return fn(p.on(tx, q)) })
}

func (p port[T]) WriteScoped(ctx context.Context, scope agentmail.Scope, fn func(T) error) error {
	return p.r.WriteScopedSQL(ctx, scope, func(tx agentmail.Tx, q Querier) error { return fn(p.on(tx, q)) })
}

func (p port[T]) Read(ctx context.Context, fn func(T) error) error {
	return p.r.ReadSQL(ctx, func(tx agentmail.Tx, q Querier) error { return fn(p.on(tx, q)) })
}

// Statements is the Querier of an engine's transaction, made of its own
// statement functions (so statements keep the engine's handling: prepared
// statement cache, error notes). Rebind, when set, rewrites each query
// first: PostgresRebind for PostgreSQL, nil for SQLite, whose placeholders
// the queries are written in.
type Statements struct {
	ExecFn     func(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryFn    func(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowFn func(ctx context.Context, query string, args ...any) Row
	Rebind     func(query string) string
}

func (s Statements) query(q string) string {
	if s.Rebind == nil {
		return q
	}
	return s.Rebind(q)
}

func (s Statements) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.ExecFn(ctx, s.query(query), args...)
}

func (s Statements) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return s.QueryFn(ctx, s.query(query), args...)
}

func (s Statements) QueryRow(ctx context.Context, query string, args ...any) Row {
	return s.QueryRowFn(ctx, s.query(query), args...)
}

// rebound maps a query to its PostgreSQL form.
var rebound struct {
	sync.RWMutex
	m map[string]string
}

// PostgresRebind is store.RebindPostgres, kept per query: the dialects'
// queries are constants, so each is rewritten once per process.
func PostgresRebind(query string) string {
	rebound.RLock()
	q, ok := rebound.m[query]
	rebound.RUnlock()
	if ok {
		return q
	}
	q = store.RebindPostgres(query)
	rebound.Lock()
	if rebound.m == nil {
		rebound.m = map[string]string{}
	}
	rebound.m[query] = q
	rebound.Unlock()
	return q
}

// After is the bound of an "after since" filter: since in microseconds, or
// -1 (every row) for the zero time.
func After(since time.Time) int64 {
	if since.IsZero() {
		return -1
	}
	return since.UnixMicro()
}
