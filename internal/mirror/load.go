package mirror

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

// Message is an agent-mail message as the sinks render it. It is read
// straight from the am_ tables (read-only): the sinks need the sender and
// recipient names and the project slug, which no single Store call returns.
type Message struct {
	ID          int64
	ProjectID   int64
	ProjectSlug string
	ThreadID    string // as stored; "" when the message names no thread
	ThreadKey   string // ThreadID, or the message id when it names none
	From        string
	To, CC, BCC []string
	Subject     string
	BodyMD      string
	Importance  string
	AckRequired bool
	CreatedAt   time.Time
	ReplyTo     int64
}

// ErrNoMessage means the outbox names a message that no longer exists.
var ErrNoMessage = errors.New("message not found")

// LoadMessage reads message id with its sender, recipients and project.
func LoadMessage(ctx context.Context, db *store.DB, id int64) (*Message, error) {
	m := &Message{ID: id}
	var thread sql.NullString
	var replyTo sql.NullInt64
	var created int64
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT m.project_id, p.slug, m.thread_id, a.name, m.subject, m.body_md,
			m.importance, m.ack_required, m.created_us, m.reply_to
		FROM am_messages m JOIN am_projects p ON p.id = m.project_id JOIN am_agents a ON a.id = m.sender_id
		WHERE m.id = ?`), id).Scan(&m.ProjectID, &m.ProjectSlug, &thread, &m.From, &m.Subject, &m.BodyMD,
		&m.Importance, &m.AckRequired, &created, &replyTo)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("loading message %d: %w", id, ErrNoMessage)
	}
	if err != nil {
		return nil, fmt.Errorf("loading message %d: %w", id, err)
	}
	m.ThreadID, m.ReplyTo, m.CreatedAt = thread.String, replyTo.Int64, time.UnixMicro(created).UTC()
	m.ThreadKey = m.ThreadID
	if m.ThreadKey == "" {
		m.ThreadKey = strconv.FormatInt(id, 10)
	}
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT a.name, r.kind FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id
		WHERE r.message_id = ? ORDER BY r.ord`), id)
	if err != nil {
		return nil, fmt.Errorf("loading recipients of message %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, kind string
		if err := rows.Scan(&name, &kind); err != nil {
			return nil, fmt.Errorf("loading recipients of message %d: %w", id, err)
		}
		switch kind {
		case "to":
			m.To = append(m.To, name)
		case "cc":
			m.CC = append(m.CC, name)
		default:
			m.BCC = append(m.BCC, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading recipients of message %d: %w", id, err)
	}
	return m, nil
}

// ThreadRef identifies an earlier message of an agent thread.
type ThreadRef struct {
	ID        int64
	CreatedAt time.Time
}

// PriorInThread lists the messages of m's agent thread that precede it,
// oldest first.
func PriorInThread(ctx context.Context, db *store.DB, m *Message) ([]ThreadRef, error) {
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT id, created_us FROM am_messages
		WHERE project_id = ?1 AND (thread_id = ?2 OR (id = ?3 AND thread_id IS NULL)) AND id < ?4 ORDER BY id`),
		m.ProjectID, m.ThreadKey, threadArg(m.ThreadKey), m.ID)
	if err != nil {
		return nil, fmt.Errorf("loading thread of message %d: %w", m.ID, err)
	}
	defer rows.Close()
	var out []ThreadRef
	for rows.Next() {
		var r ThreadRef
		var us int64
		if err := rows.Scan(&r.ID, &us); err != nil {
			return nil, fmt.Errorf("loading thread of message %d: %w", m.ID, err)
		}
		r.CreatedAt = time.UnixMicro(us).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("loading thread of message %d: %w", m.ID, err)
	}
	return out, nil
}

// threadArg is the message id a thread key may name (-1 when none), as in
// the agent-mail store: a thread named by its first message's id.
func threadArg(key string) int64 {
	if n, err := strconv.ParseInt(key, 10, 64); err == nil {
		return n
	}
	return -1
}
