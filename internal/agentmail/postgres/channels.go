package postgres

import (
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
)

// The dialects' storage ports on this store (agentmail/channels and
// agentmail/mailboxset write their SQL once, in their packages), run by
// the same Write (serializable, retried) and Read as the store's own
// transactions. Their queries are written in SQLite's placeholders, which
// PostgreSQL does not take: each is rebound to $N. Every statement goes
// through tx's own methods, so a failure is noted on the transaction (see
// run).
func (s *Store) Channels() channels.Store {
	return amsql.NewPort(s.write, s.read, statements, channels.On)
}

// Mailboxes is the mailbox set's port (see Channels).
func (s *Store) Mailboxes() mailboxset.Store {
	return amsql.NewPort(s.write, s.read, statements, mailboxset.On)
}

func statements(t *tx) amsql.Querier {
	return amsql.Statements{ExecFn: t.Exec, QueryFn: t.Query, QueryRowFn: t.QueryRow, Rebind: amsql.PostgresRebind}
}
