package sqlite

import (
	"context"
	"database/sql"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// AgentHolder implements agentmail.HoldersTx.
func (t *tx) AgentHolder(ctx context.Context, agentID int64) (agentmail.AgentHolder, error) {
	row, err := t.queryRow(ctx, `SELECT agent_id, session, token_hash, bound_us FROM am_agent_holders WHERE agent_id = ?`, agentID)
	if err != nil {
		return agentmail.AgentHolder{}, err
	}
	var h agentmail.AgentHolder
	var bound sql.NullInt64
	if err := row.Scan(&h.AgentID, &h.Session, &h.TokenHash, &bound); err != nil {
		return agentmail.AgentHolder{}, notFound(err)
	}
	h.BoundAt = fromUS(bound)
	return h, nil
}

// SetAgentHolder implements agentmail.HoldersTx.
func (t *tx) SetAgentHolder(ctx context.Context, h agentmail.AgentHolder) error {
	_, err := t.exec(ctx, `INSERT INTO am_agent_holders (agent_id, session, token_hash, bound_us) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET session = excluded.session, token_hash = excluded.token_hash, bound_us = excluded.bound_us`,
		h.AgentID, h.Session, h.TokenHash, us(h.BoundAt))
	return err
}
