package sqlite

import (
	"context"
	"database/sql"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/dialectsql"
)

// The dialects' storage ports on this store (agentmail/channels,
// agentmail/mailboxset; their SQL is written once, in those packages):
// a dialect's transaction is this store's transaction with the dialect's
// tables on it, run by the same Write (group commit) and Read.

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

// querier is the transaction as the dialects' SQL uses it: SQLite's
// placeholders are the ones it is written in.
type querier struct{ t *tx }

func (q querier) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.t.exec(ctx, query, args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.t.query(ctx, query, args...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) dialectsql.Row {
	row, err := q.t.queryRow(ctx, query, args...)
	if err != nil {
		return errRow{err}
	}
	return row
}

// errRow is a row whose statement could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
