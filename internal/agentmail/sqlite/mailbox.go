package sqlite

import "github.com/mailgate/mailgate/internal/agentmail/mailboxset"

var (
	_ mailboxset.Store = port[mailboxset.Tx]{}
	_ mailboxset.Tx    = mbTx{}
)

// Mailboxes is the mailbox set's storage port on this store (see channels.go).
func (s *Store) Mailboxes() mailboxset.Store {
	return port[mailboxset.Tx]{s, func(t *tx) mailboxset.Tx { return mbTx{t, mailboxset.SQL(querier{t})} }}
}

type mbTx struct {
	*tx
	mailboxset.Tables
}
