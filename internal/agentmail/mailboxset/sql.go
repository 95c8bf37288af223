package mailboxset

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// Statuses and import records (am_mb_status, am_mb_imports; migrations of
// both engines) in one body of SQL: see channels/sql.go, which does the
// same for its tables.

// SQLStore is the set's storage port on an engine (an amsql.Runner: both
// engines' stores are, and amstore hands them over), its tables reached by
// the SQL of this file.
func SQLStore(r amsql.Runner) Store { return amsql.NewPort(r, On) }

// On is the set's transaction on tx (an engine's), whose statements q runs.
func On(tx agentmail.Tx, q amsql.Querier) Tx { return sqlTx{Tx: tx, q: q} }

// sqlTx adds the set's tables to a core transaction.
type sqlTx struct {
	agentmail.Tx
	q amsql.Querier
}

// OldestUnread uses am_recipients_unread (0002_compat.sql).
func (t sqlTx) OldestUnread(ctx context.Context, agentID int64) (int64, error) {
	var id int64
	err := t.q.QueryRow(ctx, `SELECT r.message_id FROM am_recipients r
		WHERE r.agent_id = ? AND r.read_us IS NULL AND r.delivered_us IS NOT NULL
		ORDER BY r.message_id LIMIT 1`, agentID).Scan(&id)
	return id, amsql.NotFound(err)
}

// SetMailboxStatus: the flag is compared with 1 rather than passed as a
// boolean, which SQLite lacks; the excluded row's column is qualified by
// the table, which PostgreSQL requires inside DO UPDATE and SQLite accepts.
func (t sqlTx) SetMailboxStatus(ctx context.Context, agentID int64, status string, at time.Time, resetNotified bool) error {
	_, err := t.q.Exec(ctx, `INSERT INTO am_mb_status (agent_id, status, updated_us) VALUES (?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET status = excluded.status, updated_us = excluded.updated_us,
		notified_us = CASE WHEN ? = 1 THEN NULL ELSE am_mb_status.notified_us END`, agentID, status, amsql.US(at), store.Flag(resetNotified))
	return err
}

func (t sqlTx) MailboxState(ctx context.Context, agentID int64) (State, error) {
	var s State
	var upd, notified sql.NullInt64
	err := t.q.QueryRow(ctx, `SELECT agent_id, status, updated_us, notified_us FROM am_mb_status WHERE agent_id = ?`, agentID).
		Scan(&s.AgentID, &s.Status, &upd, &notified)
	if err != nil {
		return State{}, amsql.NotFound(err)
	}
	s.UpdatedAt, s.NotifiedAt = amsql.FromUS(upd), amsql.FromUS(notified)
	return s, nil
}

func (t sqlTx) SetMailboxNotified(ctx context.Context, agentID int64, at time.Time) error {
	_, err := t.q.Exec(ctx, `UPDATE am_mb_status SET notified_us = ? WHERE agent_id = ?`, amsql.US(at), agentID)
	return err
}

// ClaimMailboxImport uses am_mb_imports (the imports migration).
func (t sqlTx) ClaimMailboxImport(ctx context.Context, projectID int64, mailbox, origID string) (bool, error) {
	res, err := t.q.Exec(ctx, `INSERT INTO am_mb_imports (project_id, mailbox, orig_id) VALUES (?, ?, ?)
		ON CONFLICT DO NOTHING`, projectID, mailbox, origID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
