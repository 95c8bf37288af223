package amsql

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
)

var (
	// The scan starts from the partial index of recent ack_required
	// messages (0007_ack_escalations.sql) and joins their copies by key.
	overdueCopies = define(`SELECT r.message_id, r.agent_id, m.project_id, r.delivered_us,
		coalesce((SELECT max(e.step) FROM am_ack_escalations e WHERE e.message_id = r.message_id AND e.agent_id = r.agent_id), 0)
		FROM am_messages m JOIN am_recipients r ON r.message_id = m.id
		WHERE m.ack_required = 1 AND m.created_us >= ?1 AND r.ack_us IS NULL AND r.delivered_us IS NOT NULL AND r.delivered_us <= ?2
		AND r.agent_id <> m.sender_id
		AND NOT EXISTS (SELECT 1 FROM am_ack_escalations e WHERE e.message_id = r.message_id AND e.agent_id = r.agent_id AND e.step >= ?3)
		ORDER BY r.message_id, r.agent_id LIMIT ?4`)
	claimEscalation = define(`INSERT INTO am_ack_escalations (message_id, agent_id, step, at_us) VALUES (?, ?, ?, ?)
		ON CONFLICT DO NOTHING`)
	setEscalationMessage = define(`UPDATE am_ack_escalations SET escalation_id = ? WHERE message_id = ? AND agent_id = ? AND step = ?`)
	escalations          = define(`SELECT message_id, agent_id, step, at_us, coalesce(escalation_id, 0) FROM am_ack_escalations
		WHERE message_id = ? ORDER BY agent_id, step`)
)

// OverdueCopies implements agentmail.EscalationTx.
func (t *Tx) OverdueCopies(ctx context.Context, q agentmail.OverdueQuery) ([]agentmail.OverdueCopy, error) {
	return all(ctx, t, overdueCopies, scanOverdue, US(q.CreatedSince), US(q.DeliveredBefore), q.LastStep, q.Limit)
}

func scanOverdue(row Row) (agentmail.OverdueCopy, error) {
	var c agentmail.OverdueCopy
	err := row.Scan(&c.MessageID, &c.AgentID, &c.ProjectID, Time(&c.DeliveredAt), &c.Step)
	return c, err
}

// ClaimEscalation implements agentmail.EscalationTx.
func (t *Tx) ClaimEscalation(ctx context.Context, e agentmail.Escalation) (bool, error) {
	res, err := t.exec(ctx, claimEscalation, e.MessageID, e.AgentID, e.Step, US(e.At))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetEscalationMessage implements agentmail.EscalationTx.
func (t *Tx) SetEscalationMessage(ctx context.Context, e agentmail.Escalation) error {
	_, err := t.exec(ctx, setEscalationMessage, e.EscalationID, e.MessageID, e.AgentID, e.Step)
	return err
}

// Escalations implements agentmail.EscalationTx.
func (t *Tx) Escalations(ctx context.Context, messageID int64) ([]agentmail.Escalation, error) {
	return all(ctx, t, escalations, scanEscalation, messageID)
}

func scanEscalation(row Row) (agentmail.Escalation, error) {
	var e agentmail.Escalation
	err := row.Scan(&e.MessageID, &e.AgentID, &e.Step, Time(&e.At), &e.EscalationID)
	return e, err
}
