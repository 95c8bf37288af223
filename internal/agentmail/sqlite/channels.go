package sqlite

import (
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
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
	return amsql.NewPort(s.write, s.read, statements, channels.On)
}

// Mailboxes is the mailbox set's storage port on this store.
func (s *Store) Mailboxes() mailboxset.Store {
	return amsql.NewPort(s.write, s.read, statements, mailboxset.On)
}

// statements is the transaction itself: its Querier runs the store's
// prepared statements, and the dialects' queries are in its placeholders.
func statements(t *tx) amsql.Querier { return t }
