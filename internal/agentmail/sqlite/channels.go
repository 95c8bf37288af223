package sqlite

import (
	"context"
	"database/sql"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/dialectsql"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
)

// The dialects' storage ports on this store (agentmail/channels and
// agentmail/mailboxset write their SQL once, in their packages): a
// dialect's transaction is this store's transaction with the dialect's
// tables on it, run by the same Write (group commit) and Read.

// Channels is the channels set's storage port on this store.
func (s *Store) Channels() channels.Store {
	return dialectsql.Port[*tx, channels.Tx]{WriteE: s.write, ReadE: s.read, Wrap: func(t *tx) channels.Tx {
		return struct {
			*tx
			channels.Tables
		}{t, channels.SQL(querier{t})}
	}}
}

// Mailboxes is the mailbox set's storage port on this store.
func (s *Store) Mailboxes() mailboxset.Store {
	return dialectsql.Port[*tx, mailboxset.Tx]{WriteE: s.write, ReadE: s.read, Wrap: func(t *tx) mailboxset.Tx {
		return struct {
			*tx
			mailboxset.Tables
		}{t, mailboxset.SQL(querier{t})}
	}}
}

// querier is the transaction as the dialects' SQL uses it: SQLite's
// placeholders are the ones it is written in. The queries are prepared
// and kept store-wide as the store's own are (see tx.stmt).
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
