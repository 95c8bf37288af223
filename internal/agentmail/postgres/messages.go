package postgres

import (
	"context"
	"database/sql"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// msgCols selects a message with its sender's name; the body is replaced by
// an empty string unless $1 is true, so listings without bodies do not copy
// them out of the database. Every query using it passes the flag as $1.
const msgCols = `m.id, m.project_id, m.sender_id, a.name, m.thread_id, m.subject,
	CASE WHEN $1::boolean THEN m.body_md ELSE '' END, m.importance, m.ack_required <> 0, m.created_us, m.reply_to`

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

func (t *tx) MessagesAfter(ctx context.Context, projectID, afterID int64, limit int) ([]agentmail.Message, error) {
	rows, err := t.query(ctx, `SELECT `+msgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = $2 AND m.id > $3 ORDER BY m.id LIMIT $4`,
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

// InsertMessage writes the message and all its copies in one statement (one
// round trip per send): the recipients' columns travel as parallel arrays,
// and their order of address is the array order.
func (t *tx) InsertMessage(ctx context.Context, m *agentmail.Message) error {
	n := len(m.Recipients)
	agents, kinds := make([]int64, n), make([]string, n)
	delivered, held := make([]*int64, n), make([]*string, n)
	for i, r := range m.Recipients {
		agents[i], kinds[i] = r.AgentID, r.Kind
		if !r.DeliveredAt.IsZero() {
			d := r.DeliveredAt.UnixMicro()
			delivered[i] = &d
		}
		if r.HeldReason != "" {
			h := r.HeldReason
			held[i] = &h
		}
	}
	id, err := t.insertID(ctx, `WITH m AS (
			INSERT INTO am_messages (project_id, sender_id, thread_id, subject, body_md, importance, ack_required, created_us, reply_to)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
		), r AS (
			INSERT INTO am_recipients (message_id, agent_id, ord, kind, delivered_us, held_reason)
			SELECT m.id, c.agent_id, c.ord - 1, c.kind, c.delivered_us, c.held_reason
			FROM m, unnest($10::bigint[], $11::text[], $12::bigint[], $13::text[]) WITH ORDINALITY AS c(agent_id, kind, delivered_us, held_reason, ord)
		)
		SELECT id FROM m`,
		m.ProjectID, m.SenderID, nullStr(m.ThreadID), m.Subject, m.BodyMD, string(m.Importance), flag(m.AckRequired), us(m.CreatedAt), nullID(m.ReplyTo),
		agents, kinds, delivered, held)
	if err != nil {
		return err
	}
	m.ID = id
	for i := range m.Recipients {
		m.Recipients[i].MessageID = id
	}
	return nil
}

func (t *tx) MessageByID(ctx context.Context, id int64) (agentmail.Message, error) {
	return scanMessage(t.queryRow(ctx, `SELECT `+msgCols+` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.id = $2`, true, id))
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

func collectRecipients(rows *sql.Rows) ([]agentmail.Recipient, error) {
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

func (t *tx) Recipients(ctx context.Context, ids []int64) (map[int64][]agentmail.Recipient, error) {
	out := make(map[int64][]agentmail.Recipient, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := t.query(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id = ANY($1::bigint[]) ORDER BY r.message_id, r.ord`, ids)
	if err != nil {
		return nil, err
	}
	rs, err := collectRecipients(rows)
	for _, r := range rs {
		out[r.MessageID] = append(out[r.MessageID], r)
	}
	return out, err
}

func (t *tx) Copy(ctx context.Context, messageID, agentID int64) (agentmail.Recipient, error) {
	return scanRecipient(t.queryRow(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id = $1 AND r.agent_id = $2`, messageID, agentID))
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
	p := params{q.WithBodies}
	if q.ThreadID != "" {
		// A thread is small and an inbox may be huge: the planner starts
		// from the thread on its own (no join-order hint needed here).
		b.WriteString(`SELECT ` + msgCols + `, r.kind, r.read_us, r.ack_us
			FROM am_messages m JOIN am_recipients r ON r.message_id = m.id AND r.agent_id = ` + p.add(q.AgentID) + `
			JOIN am_agents a ON a.id = m.sender_id
			WHERE (m.project_id = ` + p.add(q.ProjectID) + ` AND m.thread_id = ` + p.add(q.ThreadID) +
			` OR m.id = ` + p.add(threadArg(q.ThreadID)) + ` AND m.thread_id IS NULL) AND r.delivered_us IS NOT NULL`)
	} else {
		b.WriteString(`SELECT ` + msgCols + `, r.kind, r.read_us, r.ack_us
			FROM am_recipients r JOIN am_messages m ON m.id = r.message_id JOIN am_agents a ON a.id = m.sender_id
			WHERE r.agent_id = ` + p.add(q.AgentID) + ` AND r.delivered_us IS NOT NULL`)
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
		b.WriteString(` AND m.created_us > ` + p.add(us(q.Since)))
	}
	if q.ThreadID != "" {
		b.WriteString(` ORDER BY m.id DESC`)
	} else {
		b.WriteString(` ORDER BY r.message_id DESC`) // walks the inbox index backwards
	}
	b.WriteString(` LIMIT ` + p.add(q.Limit))
	rows, err := t.query(ctx, b.String(), p...)
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
		WHERE m.project_id = $2 AND (m.thread_id = $3 OR (m.id = $4 AND m.thread_id IS NULL)) ORDER BY m.id LIMIT $5`,
		withBodies, projectID, threadID, threadArg(threadID), limit)
	if err != nil {
		return nil, err
	}
	return collectMessages(rows)
}

func (t *tx) SetRead(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET read_us = $1 WHERE message_id = $2 AND agent_id = $3 AND read_us IS NULL`, us(at), messageID, agentID)
	return err
}

func (t *tx) SetAck(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET ack_us = coalesce(ack_us, $1), read_us = coalesce(read_us, $1)
		WHERE message_id = $2 AND agent_id = $3`, us(at), messageID, agentID)
	return err
}

func (t *tx) HeldCopies(ctx context.Context, recipientID, senderID int64) ([]agentmail.Recipient, error) {
	rows, err := t.query(ctx, `SELECT `+rcptCols+` FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id JOIN am_messages m ON m.id = r.message_id
		WHERE r.agent_id = $1 AND r.delivered_us IS NULL AND ($2::bigint = 0 OR m.sender_id = $2) ORDER BY r.message_id`, recipientID, senderID)
	if err != nil {
		return nil, err
	}
	return collectRecipients(rows)
}

func (t *tx) Deliver(ctx context.Context, messageID, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_recipients SET delivered_us = $1, held_reason = NULL WHERE message_id = $2 AND agent_id = $3 AND delivered_us IS NULL`,
		us(at), messageID, agentID)
	return err
}

// viewer restricts a search to messages the agent sent or had delivered.
func viewer(p *params, agentID int64) string {
	v := p.add(agentID)
	return ` AND (m.sender_id = ` + v + ` OR EXISTS (SELECT 1 FROM am_recipients v WHERE v.message_id = m.id AND v.agent_id = ` + v + ` AND v.delivered_us IS NOT NULL))`
}

// Search runs q.Match, translated to a tsquery (see Tsquery), against the
// GIN index on am_messages.fts. One statement serves both halves of the
// contract: it returns the newest Window matches with bodies and their
// ts_rank_cd; when fewer matched, that is every match, and they are ranked
// here (best first, older first among equals, as SQLite's ORDER BY rank,
// id) without bodies.
func (t *tx) Search(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, bool, error) {
	if q.Match == "" {
		ms, err := t.searchLike(ctx, q)
		return ms, false, err
	}
	tsq := Tsquery(q.Match)
	if tsq == "" {
		return nil, true, nil // nothing searchable survived: no match
	}
	p := params{true, tsq, q.ProjectID}
	query := `SELECT ` + msgCols + `, ts_rank_cd(m.fts, q.q)::float8
		FROM to_tsquery('pg_catalog.simple', $2) AS q(q)
		JOIN am_messages m ON m.fts @@ q.q
		JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = $3 AND querytree(q.q) <> 'T'`
	// querytree is 'T' when a branch of the query holds exclusions only
	// (its terms all dropped by the parser): such a query would read every
	// message, and FTS5 matches nothing for it.
	if q.ViewerID != 0 {
		query += viewer(&p, q.ViewerID)
	}
	query += ` ORDER BY m.id DESC LIMIT ` + p.add(q.Window)
	type hit struct {
		m    agentmail.Message
		rank float64
	}
	var hits []hit
	err := t.savepoint(ctx, func() error {
		rows, err := t.query(ctx, query, p...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h hit
			if h.m, err = scanMessage(rows, &h.rank); err != nil {
				return err
			}
			hits = append(hits, h)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, err
	}
	ms := make([]agentmail.Message, len(hits))
	if len(hits) >= q.Window {
		for i, h := range hits {
			ms[i] = h.m
		}
		return ms, false, nil
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank > hits[j].rank
		}
		return hits[i].m.ID < hits[j].m.ID
	})
	if q.Limit >= 0 && len(ms) > q.Limit {
		ms = ms[:q.Limit]
	}
	for i := range ms {
		ms[i] = hits[i].m
		ms[i].BodyMD = "" // as on SQLite: ranked results come without bodies
	}
	return ms, true, nil
}

// savepoint runs fn inside a savepoint, so that when its statement fails the
// transaction stays usable: the Service answers a refused full-text query
// with a LIKE search in the same transaction, which on PostgreSQL would
// otherwise fail as "current transaction is aborted".
func (t *tx) savepoint(ctx context.Context, fn func() error) error {
	if _, err := t.tx.ExecContext(ctx, `SAVEPOINT am_search`); err != nil {
		return err
	}
	before := t.failed
	if err := fn(); err != nil {
		if _, rerr := t.tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT am_search`); rerr != nil {
			return t.note(rerr)
		}
		t.failed = before // the transaction is usable again
		return err
	}
	_, err := t.tx.ExecContext(ctx, `RELEASE SAVEPOINT am_search`)
	return err
}

func (t *tx) searchLike(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, error) {
	var b strings.Builder
	p := params{false}
	b.WriteString(`SELECT ` + msgCols + ` FROM am_messages m JOIN am_agents a ON a.id = m.sender_id WHERE m.project_id = ` + p.add(q.ProjectID))
	for _, term := range q.Terms {
		pat := p.add("%" + likeEscaper.Replace(term) + "%")
		b.WriteString(` AND (m.subject ILIKE ` + pat + ` ESCAPE '\' OR m.body_md ILIKE ` + pat + ` ESCAPE '\')`)
	}
	if q.ViewerID != 0 {
		b.WriteString(viewer(&p, q.ViewerID))
	}
	b.WriteString(` ORDER BY m.id DESC LIMIT ` + p.add(q.Limit))
	rows, err := t.query(ctx, b.String(), p...)
	if err != nil {
		return nil, err
	}
	return collectMessages(rows)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (t *tx) LastMailActivity(ctx context.Context, agentID int64) (time.Time, error) {
	var n int64
	err := t.queryRow(ctx, `SELECT greatest(
		coalesce((SELECT max(created_us) FROM am_messages WHERE sender_id = $1), 0),
		coalesce((SELECT m.created_us FROM am_recipients r JOIN am_messages m ON m.id = r.message_id
			WHERE r.agent_id = $1 AND r.delivered_us IS NOT NULL ORDER BY r.message_id DESC LIMIT 1), 0))`, agentID).Scan(&n)
	if err != nil || n == 0 {
		return time.Time{}, err
	}
	return time.UnixMicro(n).UTC(), nil
}

func (t *tx) InThread(ctx context.Context, agentID, projectID int64, threadID string) (bool, error) {
	var ok bool
	err := t.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM am_messages m
		WHERE m.project_id = $1 AND (m.thread_id = $2 OR (m.id = $3 AND m.thread_id IS NULL))
		AND (m.sender_id = $4 OR EXISTS (SELECT 1 FROM am_recipients r WHERE r.message_id = m.id AND r.agent_id = $4)))`,
		projectID, threadID, threadArg(threadID), agentID).Scan(&ok)
	return ok, err
}
