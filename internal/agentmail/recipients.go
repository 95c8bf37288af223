package agentmail

import "context"

// RecipientTx is a Tx that reads a send's recipient by name together with
// the contact links between that recipient and the sender, in one
// statement: on PostgreSQL a round trip, where AgentByName and LinkPair
// are two of a send's five. SQLite, where a statement costs no round trip,
// does not implement it.
type RecipientTx interface {
	// AgentWithLinks is AgentByName(projectID, name) and, for the agent
	// found, LinkPair(sender, agent): the link from the sender to it and
	// the one back (zero when there is none).
	AgentWithLinks(ctx context.Context, projectID int64, name string, sender int64) (a Agent, fwd, back ContactLink, err error)
}

// links are the contact links between a send's sender and one recipient,
// read with the recipient (RecipientTx); nil where the store did not.
type links struct{ fwd, back ContactLink }

// recipient finds the agent an address names (see addressed) and, where
// the transaction can (RecipientTx), the links between it and sender in
// the same statement.
func (s *Service) recipient(ctx context.Context, tx Tx, proj Project, addr string, sender int64) (Agent, *links, error) {
	p, name, err := s.addressed(ctx, tx, proj, addr)
	if err != nil {
		return Agent{}, nil, err
	}
	if rt, ok := tx.(RecipientTx); ok {
		a, fwd, back, err := rt.AgentWithLinks(ctx, p.ID, name, sender)
		if err != nil {
			return Agent{}, nil, err
		}
		return a, &links{fwd, back}, nil
	}
	a, err := tx.AgentByName(ctx, p.ID, name)
	return a, nil, err
}
