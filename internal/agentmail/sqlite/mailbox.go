package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// OldestUnread uses am_recipients_unread (0002_compat.sql).
func (t *tx) OldestUnread(ctx context.Context, agentID int64) (agentmail.Message, error) {
	row, err := t.queryRow(ctx, `SELECT `+msgCols+` FROM am_recipients r
		JOIN am_messages m ON m.id = r.message_id JOIN am_agents a ON a.id = m.sender_id
		WHERE r.agent_id = ? AND r.read_us IS NULL AND r.delivered_us IS NOT NULL
		ORDER BY r.message_id LIMIT 1`, true, agentID)
	if err != nil {
		return agentmail.Message{}, err
	}
	return scanMessage(row)
}

func (t *tx) SetMailboxStatus(ctx context.Context, agentID int64, status string, at time.Time, resetNotified bool) error {
	_, err := t.exec(ctx, `INSERT INTO am_mb_status (agent_id, status, updated_us) VALUES (?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET status = excluded.status, updated_us = excluded.updated_us,
		notified_us = CASE WHEN ? THEN NULL ELSE notified_us END`, agentID, status, us(at), resetNotified)
	return err
}

func (t *tx) MailboxState(ctx context.Context, agentID int64) (agentmail.MailboxState, error) {
	row, err := t.queryRow(ctx, `SELECT agent_id, status, updated_us, notified_us FROM am_mb_status WHERE agent_id = ?`, agentID)
	if err != nil {
		return agentmail.MailboxState{}, err
	}
	var s agentmail.MailboxState
	var upd, notified sql.NullInt64
	if err := row.Scan(&s.AgentID, &s.Status, &upd, &notified); err != nil {
		return agentmail.MailboxState{}, notFound(err)
	}
	s.UpdatedAt, s.NotifiedAt = fromUS(upd), fromUS(notified)
	return s, nil
}

// SetMailboxNotified records a notification (tests and a future notifier).
func (t *tx) SetMailboxNotified(ctx context.Context, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_mb_status SET notified_us = ? WHERE agent_id = ?`, us(at), agentID)
	return err
}

// ClaimMailboxImport records an imported message; false when it was
// imported before (0006_imports_attachments.sql).
func (t *tx) ClaimMailboxImport(ctx context.Context, projectID int64, mailbox, origID string) (bool, error) {
	res, err := t.exec(ctx, `INSERT INTO am_mb_imports (project_id, mailbox, orig_id) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, projectID, mailbox, origID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
