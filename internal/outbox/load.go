package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Messages is the agent mail the sinks copy, read through agent-mail's
// exported API (*agentmail.Service implements it): the outbox and its
// sinks own their tables, and never read agent-mail's tables.
type Messages interface {
	// MessageByID returns a message with its recipients and its project;
	// agentmail.ErrMessageNotFound when it does not exist.
	MessageByID(ctx context.Context, id int64) (agentmail.Message, agentmail.Project, error)
	// ThreadBefore returns the messages of a thread older than beforeID,
	// oldest first.
	ThreadBefore(ctx context.Context, projectID int64, threadID string, beforeID int64) ([]agentmail.Message, error)
}

var _ Messages = (*agentmail.Service)(nil)

// Message is an agent-mail message as the sinks render it: with the sender
// and recipient names and the project slug.
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
func LoadMessage(ctx context.Context, src Messages, id int64) (*Message, error) {
	am, p, err := src.MessageByID(ctx, id)
	if errors.Is(err, agentmail.ErrMessageNotFound) {
		return nil, fmt.Errorf("loading message %d: %w", id, ErrNoMessage)
	}
	if err != nil {
		return nil, fmt.Errorf("loading message %d: %w", id, err)
	}
	m := &Message{ID: id, ProjectID: am.ProjectID, ProjectSlug: p.Slug, ThreadID: am.ThreadID, From: am.SenderName,
		Subject: am.Subject, BodyMD: am.BodyMD, Importance: string(am.Importance), AckRequired: am.AckRequired,
		CreatedAt: am.CreatedAt.UTC(), ReplyTo: am.ReplyTo}
	m.ThreadKey = m.ThreadID
	if m.ThreadKey == "" {
		m.ThreadKey = strconv.FormatInt(id, 10)
	}
	for _, r := range am.Recipients {
		switch r.Kind {
		case "to":
			m.To = append(m.To, r.AgentName)
		case "cc":
			m.CC = append(m.CC, r.AgentName)
		default:
			m.BCC = append(m.BCC, r.AgentName)
		}
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
func PriorInThread(ctx context.Context, src Messages, m *Message) ([]ThreadRef, error) {
	ms, err := src.ThreadBefore(ctx, m.ProjectID, m.ThreadKey, m.ID)
	if err != nil {
		return nil, fmt.Errorf("loading thread of message %d: %w", m.ID, err)
	}
	out := make([]ThreadRef, len(ms))
	for i, pm := range ms {
		out[i] = ThreadRef{ID: pm.ID, CreatedAt: pm.CreatedAt.UTC()}
	}
	return out, nil
}
