package postgres

import (
	"context"
	"database/sql"
	"sync"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/dialectsql"
	"github.com/mailgate/mailgate/internal/store"
)

// The dialects' storage ports on this store (agentmail/channels,
// agentmail/mailboxset; their SQL is written once, in those packages):
// a dialect's transaction is this store's transaction with the dialect's
// tables on it, run by the same Write (serializable, retried) and Read.

var (
	_ channels.Store     = port[channels.Tx]{}
	_ channels.Tx        = chTx{}
	_ dialectsql.Querier = querier{}
)

// Channels is the channels set's storage port on this store.
func (s *Store) Channels() channels.Store {
	return port[channels.Tx]{s, func(t *tx) channels.Tx { return chTx{t, channels.SQL(querier{t})} }}
}

type chTx struct {
	*tx
	channels.Tables
}

// port runs a dialect's transactions (T) on the store's own.
type port[T any] struct {
	s    *Store
	wrap func(*tx) T
}

func (p port[T]) Write(ctx context.Context, fn func(T) error) error {
	return p.s.write(ctx, func(t *tx) error { return fn(p.wrap(t)) })
}

func (p port[T]) Read(ctx context.Context, fn func(T) error) error {
	return p.s.read(ctx, func(t *tx) error { return fn(p.wrap(t)) })
}

// querier is the transaction as the dialects' SQL uses it: their queries
// are written with SQLite's placeholders, rebound here to $N once per query
// (they are constants). Every statement goes through tx's own methods, so
// a failure is noted on the transaction (see run).
type querier struct{ t *tx }

var rebound sync.Map // query → its PostgreSQL form

func rebind(query string) string {
	if q, ok := rebound.Load(query); ok {
		return q.(string)
	}
	q := store.RebindPostgres(query)
	rebound.Store(query, q)
	return q
}

func (q querier) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.t.exec(ctx, rebind(query), args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.t.query(ctx, rebind(query), args...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) dialectsql.Row {
	return q.t.queryRow(ctx, rebind(query), args...)
}
