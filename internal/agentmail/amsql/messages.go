package amsql

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// MsgCols selects a message with its sender's name; the body is replaced by
// an empty string unless the first parameter of the statement is true, so
// listings without bodies do not copy them out of the database. (Rebound:
// Queries.MsgCols.)
const MsgCols = `m.id, m.project_id, m.sender_id, a.name, m.thread_id, m.subject,
	CASE WHEN ? THEN m.body_md ELSE '' END, m.importance, m.ack_required <> 0, m.created_us, m.reply_to`

// ScanMessage scans MsgCols, then extra.
func ScanMessage(row Row, extra ...any) (agentmail.Message, error) {
	var m agentmail.Message
	var thread sql.NullString
	var replyTo sql.NullInt64
	var imp string
	dest := append([]any{&m.ID, &m.ProjectID, &m.SenderID, &m.SenderName, &thread, &m.Subject, &m.BodyMD, &imp, &m.AckRequired, Time(&m.CreatedAt), &replyTo}, extra...)
	if err := row.Scan(dest...); err != nil {
		return agentmail.Message{}, NotFound(err)
	}
	m.ThreadID, m.Importance, m.ReplyTo = thread.String, agentmail.Importance(imp), replyTo.Int64
	return m, nil
}

func scanMessage(row Row) (agentmail.Message, error) { return ScanMessage(row) }

// CollectMessages scans every row of rows (MsgCols) and closes them.
func CollectMessages(rows *sql.Rows) ([]agentmail.Message, error) {
	return Collect(rows, scanMessage)
}

const rcptCols = `r.message_id, r.agent_id, a.name, a.project_id, r.kind, r.delivered_us, coalesce(r.held_reason, ''), r.read_us, r.ack_us`

func scanRecipient(row Row) (agentmail.Recipient, error) {
	var r agentmail.Recipient
	if err := row.Scan(&r.MessageID, &r.AgentID, &r.AgentName, &r.ProjectID, &r.Kind, Time(&r.DeliveredAt), &r.HeldReason, Time(&r.ReadAt), Time(&r.AckAt)); err != nil {
		return agentmail.Recipient{}, NotFound(err)
	}
	return r, nil
}

var (
	messageByID = define(`SELECT ` + MsgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.id = ?`)
	recipients  = defineFor(func(d *Dialect) string {
		return `SELECT ` + rcptCols + ` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE ` + d.InIDs("r.message_id", "?") + ` ORDER BY r.message_id, r.ord`
	})
	copyOf = define(`SELECT ` + rcptCols + ` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id = ? AND r.agent_id = ?`)
	thread = define(`SELECT ` + MsgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = ? AND (m.thread_id = ? OR (m.id = ? AND m.thread_id IS NULL)) ORDER BY m.id LIMIT ?`)
	messagesAfter = define(`SELECT ` + MsgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = ? AND m.id > ? ORDER BY m.id LIMIT ?`)
	setRead = define(`UPDATE am_recipients SET read_us = ? WHERE message_id = ? AND agent_id = ? AND read_us IS NULL`)
	setAck  = define(`UPDATE am_recipients SET ack_us = coalesce(ack_us, ?1), read_us = coalesce(read_us, ?1)
		WHERE message_id = ?2 AND agent_id = ?3`)
	// The cast types the parameter on PostgreSQL (= 0 alone would make it
	// a 32-bit integer).
	heldCopies = define(`SELECT ` + rcptCols + ` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id JOIN am_messages m ON m.id = r.message_id
		WHERE r.agent_id = ?1 AND r.delivered_us IS NULL AND (CAST(?2 AS BIGINT) = 0 OR m.sender_id = ?2) ORDER BY r.message_id`)
	deliver = define(`UPDATE am_recipients SET delivered_us = ?, held_reason = NULL WHERE message_id = ? AND agent_id = ? AND delivered_us IS NULL`)
	// lastMailActivity's second half walks the agent's inbox index backwards.
	lastMailActivity = defineFor(func(d *Dialect) string {
		return `SELECT ` + d.Greatest + `(
		coalesce((SELECT max(created_us) FROM am_messages WHERE sender_id = ?1), 0),
		coalesce((SELECT m.created_us FROM am_recipients r JOIN am_messages m ON m.id = r.message_id
			WHERE r.agent_id = ?1 AND r.delivered_us IS NOT NULL ORDER BY r.message_id DESC LIMIT 1), 0))`
	})
	inThread = define(`SELECT EXISTS (SELECT 1 FROM am_messages m
		WHERE m.project_id = ?1 AND (m.thread_id = ?2 OR (m.id = ?3 AND m.thread_id IS NULL))
		AND (m.sender_id = ?4 OR EXISTS (SELECT 1 FROM am_recipients r WHERE r.message_id = m.id AND r.agent_id = ?4)))`)
)

func (t *Tx) MessageByID(ctx context.Context, id int64) (agentmail.Message, error) {
	return ScanMessage(t.queryRow(ctx, messageByID, true, id))
}

func (t *Tx) Recipients(ctx context.Context, ids []int64) (map[int64][]agentmail.Recipient, error) {
	out := make(map[int64][]agentmail.Recipient, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(ctx, recipients, t.sql.d.IDs(ids))
	if err != nil {
		return nil, err
	}
	rs, err := Collect(rows, scanRecipient)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		out[r.MessageID] = append(out[r.MessageID], r)
	}
	return out, nil
}

func (t *Tx) Copy(ctx context.Context, messageID, agentID int64) (agentmail.Recipient, error) {
	return scanRecipient(t.queryRow(ctx, copyOf, messageID, agentID))
}

// threadArg is the message id a thread id may name (-1 when it names none).
func threadArg(threadID string) int64 {
	if n, err := strconv.ParseInt(threadID, 10, 64); err == nil {
		return n
	}
	return -1
}

func (t *Tx) Inbox(ctx context.Context, q agentmail.InboxQuery) ([]agentmail.InboxItem, error) {
	b := t.build(q.WithBodies)
	if q.ThreadID != "" {
		// A thread is small and an inbox may be huge: start from the
		// thread (Dialect.ThreadJoin), not from the inbox.
		b.WriteString(`SELECT ` + t.sql.MsgCols + `, r.kind, r.read_us, r.ack_us
			FROM am_messages m ` + t.sql.d.ThreadJoin + ` am_recipients r ON r.message_id = m.id AND r.agent_id = ` + b.arg(q.AgentID) + `
			JOIN am_agents a ON a.id = m.sender_id
			WHERE (m.project_id = ` + b.arg(q.ProjectID) + ` AND m.thread_id = ` + b.arg(q.ThreadID) +
			` OR m.id = ` + b.arg(threadArg(q.ThreadID)) + ` AND m.thread_id IS NULL) AND r.delivered_us IS NOT NULL`)
	} else {
		b.WriteString(`SELECT ` + t.sql.MsgCols + `, r.kind, r.read_us, r.ack_us
			FROM am_recipients r JOIN am_messages m ON m.id = r.message_id JOIN am_agents a ON a.id = m.sender_id
			WHERE r.agent_id = ` + b.arg(q.AgentID) + ` AND r.delivered_us IS NOT NULL`)
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
		b.WriteString(` AND m.created_us > ` + b.arg(US(q.Since)))
	}
	if q.ThreadID != "" {
		b.WriteString(` ORDER BY m.id DESC`)
	} else {
		b.WriteString(` ORDER BY r.message_id DESC`) // walks the inbox index backwards
	}
	b.WriteString(` LIMIT ` + b.arg(q.Limit))
	rows, err := b.query(ctx, t)
	if err != nil {
		return nil, err
	}
	return Collect(rows, func(row Row) (agentmail.InboxItem, error) {
		var it agentmail.InboxItem
		var err error
		it.Message, err = ScanMessage(row, &it.Kind, Time(&it.ReadAt), Time(&it.AckAt))
		return it, err
	})
}

func (t *Tx) Thread(ctx context.Context, projectID int64, threadID string, limit int, withBodies bool) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, thread, withBodies, projectID, threadID, threadArg(threadID), limit)
	if err != nil {
		return nil, err
	}
	return CollectMessages(rows)
}

func (t *Tx) MessagesAfter(ctx context.Context, projectID, afterID int64, limit int) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, messagesAfter, false, projectID, afterID, limit)
	if err != nil {
		return nil, err
	}
	return CollectMessages(rows)
}

func (t *Tx) SetRead(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, setRead, US(at), messageID, agentID)
	return err
}

func (t *Tx) SetAck(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, setAck, US(at), messageID, agentID)
	return err
}

func (t *Tx) HeldCopies(ctx context.Context, recipientID, senderID int64) ([]agentmail.Recipient, error) {
	return all(ctx, t, heldCopies, scanRecipient, recipientID, senderID)
}

func (t *Tx) Deliver(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, deliver, US(at), messageID, agentID)
	return err
}

// Viewer restricts a search to the messages an agent sent or had
// delivered; the agent's id is bound at both placeholders.
func Viewer(ph1, ph2 string) string {
	return ` AND (m.sender_id = ` + ph1 + ` OR EXISTS (SELECT 1 FROM am_recipients v WHERE v.message_id = m.id AND v.agent_id = ` + ph2 +
		` AND v.delivered_us IS NOT NULL))`
}

// SearchLike is Search without a full-text expression: every term of
// q.Terms must occur in the subject or the body (Dialect.Like), newest
// first, without bodies.
func (t *Tx) SearchLike(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, error) {
	b := t.build(false)
	b.WriteString(`SELECT ` + t.sql.MsgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.project_id = ` + b.arg(q.ProjectID))
	like := ` ` + t.sql.d.Like + ` `
	for _, term := range q.Terms {
		pat := "%" + likeEscaper.Replace(term) + "%"
		b.WriteString(` AND (m.subject` + like + b.arg(pat) + ` ESCAPE '\' OR m.body_md` + like + b.arg(pat) + ` ESCAPE '\')`)
	}
	if q.ViewerID != 0 {
		b.WriteString(Viewer(b.arg(q.ViewerID), b.arg(q.ViewerID)))
	}
	b.WriteString(` ORDER BY m.id DESC LIMIT ` + b.arg(q.Limit))
	rows, err := b.query(ctx, t)
	if err != nil {
		return nil, err
	}
	return CollectMessages(rows)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (t *Tx) LastMailActivity(ctx context.Context, agentID int64) (time.Time, error) {
	var n int64
	if err := t.queryRow(ctx, lastMailActivity, agentID).Scan(&n); err != nil || n == 0 {
		return time.Time{}, err
	}
	return time.UnixMicro(n).UTC(), nil
}

func (t *Tx) InThread(ctx context.Context, agentID, projectID int64, threadID string) (bool, error) {
	var ok bool
	err := t.queryRow(ctx, inThread, projectID, threadID, threadArg(threadID), agentID).Scan(&ok)
	return ok, err
}
