package amsql

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

// The dialects' SQL (agentmail/channels, agentmail/mailboxset) runs on the
// same Querier: each dialect writes its statements once, in SQLite's
// placeholders, and an engine plugs its ports with NewPort. Their queries
// are rebound per query on first use (PostgresRebind), as they are not
// among this package's Queries.

// NewPort is a dialect's agentmail.Port on an engine's store: write and
// read run the store's own transactions (E), q gives one's Querier, and on
// makes it the dialect's transaction (T), as the dialect's On does.
func NewPort[E agentmail.Tx, T agentmail.Tx](write, read func(context.Context, func(E) error) error,
	q func(E) Querier, on func(agentmail.Tx, Querier) T) agentmail.Port[T] {
	return port[E, T]{write, read, func(e E) T { return on(e, q(e)) }}
}

type port[E, T any] struct {
	write, read func(context.Context, func(E) error) error
	wrap        func(E) T
}

func (p port[E, T]) Write(ctx context.Context, fn func(T) error) error {
	return p.write(ctx, func(e E) error { return fn(p.wrap(e)) })
}

func (p port[E, T]) Read(ctx context.Context, fn func(T) error) error {
	return p.read(ctx, func(e E) error { return fn(p.wrap(e)) })
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
