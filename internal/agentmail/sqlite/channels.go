package sqlite

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/dialectsql"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
)

// The dialects' storage ports on this store (agentmail/channels and
// agentmail/mailboxset write their SQL once, in their packages): a
// dialect's transaction is this store's transaction with the dialect's
// tables on it, run by the same Write (group commit) and Read. Their
// queries are written in SQLite's placeholders and go through the store's
// prepared statements as its own do (see tx.stmt).

// Channels is the channels set's storage port on this store.
func (s *Store) Channels() channels.Store {
	return dialectsql.NewPort(s.write, s.read, statements, channels.On)
}

// Mailboxes is the mailbox set's storage port on this store.
func (s *Store) Mailboxes() mailboxset.Store {
	return dialectsql.NewPort(s.write, s.read, statements, mailboxset.On)
}

func statements(t *tx) dialectsql.Querier {
	return dialectsql.Statements{ExecFn: t.exec, QueryFn: t.query, QueryRowFn: t.row}
}

// row is queryRow as one value: a statement that could not be prepared
// fails at Scan.
func (t *tx) row(ctx context.Context, query string, args ...any) dialectsql.Row {
	r, err := t.queryRow(ctx, query, args...)
	if err != nil {
		return errRow{err}
	}
	return r
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
