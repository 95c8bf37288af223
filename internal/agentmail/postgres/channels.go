package postgres

import (
	"context"
	"database/sql"
	"sync"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/dialectsql"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/store"
)

// The dialects' storage ports on this store (agentmail/channels and
// agentmail/mailboxset write their SQL once, in their packages): a
// dialect's transaction is this store's transaction with the dialect's
// tables on it, run by the same Write (serializable, retried) and Read.

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

// querier is the transaction as the dialects' SQL uses it. Their queries
// are written with SQLite's placeholders, which PostgreSQL does not take:
// each is rebound to $N here, once (queries are constants). Every statement
// goes through tx's own methods, so a failure is noted on the transaction
// (see run).
type querier struct{ t *tx }

// rebound maps a query to its PostgreSQL form.
var rebound struct {
	sync.RWMutex
	m map[string]string
}

func rebind(query string) string {
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

func (q querier) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.t.exec(ctx, rebind(query), args...)
}

func (q querier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.t.query(ctx, rebind(query), args...)
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) dialectsql.Row {
	return q.t.queryRow(ctx, rebind(query), args...)
}
