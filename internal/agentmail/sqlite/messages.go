package sqlite

import (
	"context"
	"strconv"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
)

// The statements of this file are SQLite's own; the others live in amsql.

// InsertMessage writes the message, then each copy: SQLite has no
// data-modifying WITH to do it in one statement as PostgreSQL does, and a
// statement costs no round trip here. The insert trigger queues the message
// for the full-text index (see indexer.go).
func (t *tx) InsertMessage(ctx context.Context, m *agentmail.Message) error {
	res, err := t.exec(ctx, `INSERT INTO am_messages (project_id, sender_id, thread_id, subject, body_md, importance, ack_required, created_us, reply_to)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ProjectID, m.SenderID, amsql.NullStr(m.ThreadID), m.Subject, m.BodyMD, string(m.Importance), m.AckRequired, us(m.CreatedAt), amsql.NullID(m.ReplyTo))
	if err != nil {
		return err
	}
	if m.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	t.queued = true // the insert trigger queued it for the full-text index
	for i := range m.Recipients {
		r := &m.Recipients[i]
		r.MessageID = m.ID
		if _, err := t.exec(ctx, `INSERT INTO am_recipients (message_id, agent_id, ord, kind, delivered_us, held_reason) VALUES (?, ?, ?, ?, ?, ?)`,
			m.ID, r.AgentID, i, r.Kind, us(r.DeliveredAt), amsql.NullStr(r.HeldReason)); err != nil {
			return err
		}
	}
	return nil
}

var viewerClause = amsql.Viewer("?", "?")

// Search runs q.Match through FTS5 (am_messages_fts, whose rowid is the
// message id, and its bm25 rank), or q.Terms through LIKE when Match is "".
func (t *tx) Search(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, bool, error) {
	if q.Match == "" {
		ms, err := t.SearchLike(ctx, q)
		return ms, false, err
	}
	viewer, vargs := "", []any{}
	if q.ViewerID != 0 {
		viewer, vargs = viewerClause, []any{q.ViewerID, q.ViewerID}
	}
	// The newest Window matches: FTS5 walks rowids newest first and stops
	// after Window rows, so this is cheap however common the terms are.
	args := append([]any{true, q.Match, q.ProjectID}, vargs...)
	rows, err := t.query(ctx, `SELECT `+msgCols+` FROM am_messages_fts f JOIN am_messages m ON m.id = f.rowid JOIN am_agents a ON a.id = m.sender_id
		WHERE am_messages_fts MATCH ? AND m.project_id = ?`+viewer+` ORDER BY f.rowid DESC LIMIT `+strconv.Itoa(q.Window), args...)
	if err != nil {
		return nil, false, err
	}
	recent, err := amsql.CollectMessages(rows)
	if err != nil || len(recent) >= q.Window {
		return recent, false, err
	}
	// A selective query: rank every match by bm25.
	args = append([]any{false, q.Match, q.ProjectID}, vargs...)
	rows, err = t.query(ctx, `SELECT `+msgCols+` FROM am_messages_fts f JOIN am_messages m ON m.id = f.rowid JOIN am_agents a ON a.id = m.sender_id
		WHERE am_messages_fts MATCH ? AND m.project_id = ?`+viewer+` ORDER BY f.rank, m.id LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, false, err
	}
	ms, err := amsql.CollectMessages(rows)
	return ms, true, err
}
