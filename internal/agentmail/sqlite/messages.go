package sqlite

import (
	"context"
	"slices"
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
		m.ProjectID, m.SenderID, amsql.NullStr(m.ThreadID), m.Subject, m.BodyMD, string(m.Importance), m.AckRequired, amsql.US(m.CreatedAt), amsql.NullID(m.ReplyTo))
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
			m.ID, r.AgentID, i, r.Kind, amsql.US(r.DeliveredAt), amsql.NullStr(r.HeldReason)); err != nil {
			return err
		}
	}
	return nil
}

var viewerClause = amsql.Viewer("?", "?")

// Search runs q.Match, rendered for FTS5 (see FTS5), through
// am_messages_fts (whose rowid is the message id, and its bm25 rank), or
// q.Terms through LIKE when Match is nil.
// It always answers ranked: when more than q.Window messages match, it
// ranks the newest q.Window itself (agentmail.RankRecent by q.Terms),
// reading only their subjects and bodies, and reads whole messages for the
// q.Limit it keeps; a broad search used to read q.Window whole messages
// (sender, thread, dates: 200 joined rows) to answer 20 of them.
func (t *tx) Search(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, bool, error) {
	if q.Match == nil {
		ms, err := t.SearchLike(ctx, q)
		return ms, false, err
	}
	expanded, err := t.expandPrefixes(ctx, q.Match)
	if err != nil {
		return nil, false, err
	}
	match := FTS5(expanded)
	viewer, vargs := "", []any{}
	if q.ViewerID != 0 {
		viewer, vargs = viewerClause, []any{q.ViewerID, q.ViewerID}
	}
	// The newest Window matches: FTS5 walks rowids newest first and stops
	// after Window rows, so this is cheap however common the terms are.
	rows, err := t.query(ctx, `SELECT m.id, m.subject, m.body_md FROM am_messages_fts f JOIN am_messages m ON m.id = f.rowid
		WHERE am_messages_fts MATCH ? AND m.project_id = ?`+viewer+` ORDER BY f.rowid DESC LIMIT `+strconv.Itoa(q.Window), append([]any{match, q.ProjectID}, vargs...)...)
	if err != nil {
		return nil, false, err
	}
	recent, err := amsql.Collect(rows, func(row amsql.Row) (m agentmail.Message, err error) {
		return m, row.Scan(&m.ID, &m.Subject, &m.BodyMD)
	})
	if err != nil {
		return nil, false, err
	}
	if len(recent) >= q.Window {
		top := agentmail.RankRecent(recent, q.Terms, q.Limit)
		ids := make([]int64, len(top))
		for i, m := range top {
			ids[i] = m.ID
		}
		ms, err := t.messagesIn(ctx, ids)
		return ms, true, err
	}
	// A selective query: rank every match by bm25.
	args := append([]any{false, match, q.ProjectID}, vargs...)
	rows, err = t.query(ctx, `SELECT `+amsql.MsgCols+` FROM am_messages_fts f JOIN am_messages m ON m.id = f.rowid JOIN am_agents a ON a.id = m.sender_id
		WHERE am_messages_fts MATCH ? AND m.project_id = ?`+viewer+` ORDER BY f.rank, m.id LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, false, err
	}
	ms, err := amsql.CollectMessages(rows)
	return ms, true, err
}

// messagesIn reads the messages of ids (without bodies, as every search
// answer), in the order of ids.
func (t *tx) messagesIn(ctx context.Context, ids []int64) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, `SELECT `+amsql.MsgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE `+inJSON("m.id", "?"), false, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	ms, err := amsql.CollectMessages(rows)
	if err != nil {
		return nil, err
	}
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	slices.SortFunc(ms, func(a, b agentmail.Message) int { return at[a.ID] - at[b.ID] })
	return ms, nil
}
