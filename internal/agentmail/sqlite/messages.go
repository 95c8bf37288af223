package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// msgCols selects a message with its sender's name; the body is replaced by
// an empty string unless the first parameter is true, so listings without bodies do not
// copy them out of SQLite.
const msgCols = `m.id, m.project_id, m.sender_id, a.name, m.thread_id, m.subject,
	CASE WHEN ? THEN m.body_md ELSE '' END, m.importance, m.ack_required, m.created_us, m.reply_to`

type scanner interface{ Scan(...any) error }

func scanMessage(row scanner, extra ...any) (agentmail.Message, error) {
	var m agentmail.Message
	var thread sql.NullString
	var created, replyTo sql.NullInt64
	var imp string
	dest := append([]any{&m.ID, &m.ProjectID, &m.SenderID, &m.SenderName, &thread, &m.Subject, &m.BodyMD, &imp, &m.AckRequired, &created, &replyTo}, extra...)
	if err := row.Scan(dest...); err != nil {
		return agentmail.Message{}, notFound(err)
	}
	m.ThreadID, m.Importance, m.CreatedAt, m.ReplyTo = thread.String, agentmail.Importance(imp), fromUS(created), replyTo.Int64
	return m, nil
}

func (t *tx) InsertMessage(ctx context.Context, m *agentmail.Message) error {
	res, err := t.exec(ctx, `INSERT INTO am_messages (project_id, sender_id, thread_id, subject, body_md, importance, ack_required, created_us, reply_to)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ProjectID, m.SenderID, nullStr(m.ThreadID), m.Subject, m.BodyMD, string(m.Importance), m.AckRequired, us(m.CreatedAt), nullID(m.ReplyTo))
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
			m.ID, r.AgentID, i, r.Kind, us(r.DeliveredAt), nullStr(r.HeldReason)); err != nil {
			return err
		}
	}
	return nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func (t *tx) MessageByID(ctx context.Context, id int64) (agentmail.Message, error) {
	row, err := t.queryRow(ctx, `SELECT `+msgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.id = ?`, true, id)
	if err != nil {
		return agentmail.Message{}, err
	}
	return scanMessage(row)
}

const rcptCols = `r.message_id, r.agent_id, a.name, a.project_id, r.kind, r.delivered_us, coalesce(r.held_reason, ''), r.read_us, r.ack_us`

func scanRecipient(row scanner) (agentmail.Recipient, error) {
	var r agentmail.Recipient
	var del, read, ack sql.NullInt64
	if err := row.Scan(&r.MessageID, &r.AgentID, &r.AgentName, &r.ProjectID, &r.Kind, &del, &r.HeldReason, &read, &ack); err != nil {
		return agentmail.Recipient{}, notFound(err)
	}
	r.DeliveredAt, r.ReadAt, r.AckAt = fromUS(del), fromUS(read), fromUS(ack)
	return r, nil
}

func (t *tx) Recipients(ctx context.Context, ids []int64) (map[int64][]agentmail.Recipient, error) {
	out := make(map[int64][]agentmail.Recipient, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id IN (SELECT value FROM json_each(?)) ORDER BY r.message_id, r.ord`, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecipient(rows)
		if err != nil {
			return nil, err
		}
		out[r.MessageID] = append(out[r.MessageID], r)
	}
	return out, rows.Err()
}

func (t *tx) Copy(ctx context.Context, messageID, agentID int64) (agentmail.Recipient, error) {
	row, err := t.queryRow(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id = ? AND r.agent_id = ?`, messageID, agentID)
	if err != nil {
		return agentmail.Recipient{}, err
	}
	return scanRecipient(row)
}

// threadArg is the message id a thread id may name (-1 when it names none).
func threadArg(threadID string) int64 {
	if n, err := strconv.ParseInt(threadID, 10, 64); err == nil {
		return n
	}
	return -1
}

func (t *tx) Inbox(ctx context.Context, q agentmail.InboxQuery) ([]agentmail.InboxItem, error) {
	var b strings.Builder
	args := []any{q.WithBodies, q.AgentID}
	if q.ThreadID != "" {
		// A thread is small and an inbox may be huge: start from the
		// thread (CROSS JOIN fixes the join order), not from the inbox.
		b.WriteString(`SELECT ` + msgCols + `, r.kind, r.read_us, r.ack_us
			FROM am_messages m CROSS JOIN am_recipients r ON r.message_id = m.id AND r.agent_id = ? JOIN am_agents a ON a.id = m.sender_id
			WHERE (m.project_id = ? AND m.thread_id = ? OR m.id = ? AND m.thread_id IS NULL) AND r.delivered_us IS NOT NULL`)
		args = append(args, q.ProjectID, q.ThreadID, threadArg(q.ThreadID))
	} else {
		b.WriteString(`SELECT ` + msgCols + `, r.kind, r.read_us, r.ack_us
		FROM am_recipients r JOIN am_messages m ON m.id = r.message_id JOIN am_agents a ON a.id = m.sender_id
		WHERE r.agent_id = ? AND r.delivered_us IS NOT NULL`)
	}
	if q.UnreadOnly {
		b.WriteString(` AND r.read_us IS NULL`)
	}
	if q.UrgentOnly {
		b.WriteString(` AND m.ack_required = 1`)
	}
	if q.AckRequired {
		b.WriteString(` AND m.ack_required = 1 AND r.ack_us IS NULL`)
	}
	if !q.Since.IsZero() {
		b.WriteString(` AND m.created_us > ?`)
		args = append(args, us(q.Since))
	}
	if q.ThreadID != "" {
		b.WriteString(` ORDER BY m.id DESC LIMIT ?`)
	} else {
		b.WriteString(` ORDER BY r.message_id DESC LIMIT ?`) // walks the inbox index backwards
	}
	args = append(args, q.Limit)
	rows, err := t.query(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.InboxItem
	for rows.Next() {
		var it agentmail.InboxItem
		var read, ack sql.NullInt64
		if it.Message, err = scanMessage(rows, &it.Kind, &read, &ack); err != nil {
			return nil, err
		}
		it.ReadAt, it.AckAt = fromUS(read), fromUS(ack)
		out = append(out, it)
	}
	return out, rows.Err()
}

func (t *tx) Thread(ctx context.Context, projectID int64, threadID string, limit int, withBodies bool) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, `SELECT `+msgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = ? AND (m.thread_id = ? OR (m.id = ? AND m.thread_id IS NULL)) ORDER BY m.id LIMIT ?`,
		withBodies, projectID, threadID, threadArg(threadID), limit)
	if err != nil {
		return nil, err
	}
	return collectMessages(rows)
}

func (t *tx) MessagesAfter(ctx context.Context, projectID, afterID int64, limit int) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, `SELECT `+msgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = ? AND m.id > ? ORDER BY m.id LIMIT ?`,
		false, projectID, afterID, limit)
	if err != nil {
		return nil, err
	}
	return collectMessages(rows)
}

func collectMessages(rows *sql.Rows) ([]agentmail.Message, error) {
	defer rows.Close()
	var out []agentmail.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (t *tx) SetRead(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET read_us = ? WHERE message_id = ? AND agent_id = ? AND read_us IS NULL`, us(at), messageID, agentID)
	return err
}

func (t *tx) SetAck(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET ack_us = coalesce(ack_us, ?1), read_us = coalesce(read_us, ?1)
		WHERE message_id = ?2 AND agent_id = ?3`, us(at), messageID, agentID)
	return err
}

func (t *tx) HeldCopies(ctx context.Context, recipientID, senderID int64) ([]agentmail.Recipient, error) {
	rows, err := t.query(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id JOIN am_messages m ON m.id = r.message_id
		WHERE r.agent_id = ?1 AND r.delivered_us IS NULL AND (?2 = 0 OR m.sender_id = ?2) ORDER BY r.message_id`, recipientID, senderID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.Recipient
	for rows.Next() {
		r, err := scanRecipient(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (t *tx) Deliver(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET delivered_us = ?, held_reason = NULL WHERE message_id = ? AND agent_id = ? AND delivered_us IS NULL`,
		us(at), messageID, agentID)
	return err
}

const viewerClause = ` AND (m.sender_id = ? OR EXISTS (SELECT 1 FROM am_recipients v WHERE v.message_id = m.id AND v.agent_id = ? AND v.delivered_us IS NOT NULL))`

func (t *tx) Search(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, bool, error) {
	if q.Match == "" {
		ms, err := t.searchLike(ctx, q)
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
	recent, err := collectMessages(rows)
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
	ms, err := collectMessages(rows)
	return ms, true, err
}

func (t *tx) searchLike(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, error) {
	var b strings.Builder
	args := []any{false, q.ProjectID}
	b.WriteString(`SELECT ` + msgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.project_id = ?`)
	for _, term := range q.Terms {
		b.WriteString(` AND (m.subject LIKE ? ESCAPE '\' OR m.body_md LIKE ? ESCAPE '\')`)
		pat := "%" + likeEscaper.Replace(term) + "%"
		args = append(args, pat, pat)
	}
	if q.ViewerID != 0 {
		b.WriteString(viewerClause)
		args = append(args, q.ViewerID, q.ViewerID)
	}
	b.WriteString(` ORDER BY m.id DESC LIMIT ?`)
	rows, err := t.query(ctx, b.String(), append(args, q.Limit)...)
	if err != nil {
		return nil, err
	}
	return collectMessages(rows)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (t *tx) LastMailActivity(ctx context.Context, agentID int64) (time.Time, error) {
	row, err := t.queryRow(ctx, `SELECT max(
		coalesce((SELECT max(created_us) FROM am_messages WHERE sender_id = ?1), 0),
		coalesce((SELECT m.created_us FROM am_recipients r JOIN am_messages m ON m.id = r.message_id
			WHERE r.agent_id = ?1 AND r.delivered_us IS NOT NULL ORDER BY r.message_id DESC LIMIT 1), 0))`, agentID)
	if err != nil {
		return time.Time{}, err
	}
	var n int64
	if err := row.Scan(&n); err != nil {
		return time.Time{}, err
	}
	if n == 0 {
		return time.Time{}, nil
	}
	return time.UnixMicro(n).UTC(), nil
}

func (t *tx) InThread(ctx context.Context, agentID, projectID int64, threadID string) (bool, error) {
	row, err := t.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM am_messages m
		WHERE m.project_id = ?1 AND (m.thread_id = ?2 OR (m.id = ?3 AND m.thread_id IS NULL))
		AND (m.sender_id = ?4 OR EXISTS (SELECT 1 FROM am_recipients r WHERE r.message_id = m.id AND r.agent_id = ?4)))`,
		projectID, threadID, threadArg(threadID), agentID)
	if err != nil {
		return false, err
	}
	var ok bool
	err = row.Scan(&ok)
	return ok, err
}
