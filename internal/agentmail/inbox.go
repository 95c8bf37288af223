package agentmail

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

var zeroTime time.Time

// InboxParams are fetch_inbox's inputs.
type InboxParams struct {
	ProjectKey    string
	Agent         string
	Limit         int // 0 = 20; at most 1000
	UnreadOnly    bool
	UrgentOnly    bool // only messages that ask for an acknowledgement (ack_required), as the integration contract defines urgent_only
	ThreadID      string
	SinceTS       string // ISO-8601; only messages created after it
	IncludeBodies bool
}

// FetchInbox lists an agent's delivered messages, newest first. It never
// changes read or ack state: mark_message_read and acknowledge_message do
// that, so peeking at an inbox cannot hide mail from its owner.
func (s *Service) FetchInbox(ctx context.Context, p InboxParams) ([]FetchEntry, error) {
	q, err := inboxQuery(p)
	if err != nil {
		return nil, err
	}
	var items []InboxItem
	var agent Agent
	// No snapshot needed: the attachments were written with their messages.
	err = s.readEach(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, p.ProjectKey)
		if err != nil {
			return err
		}
		if agent, err = s.knownAgent(ctx, tx, proj, p.Agent); err != nil {
			return err
		}
		q.AgentID, q.ProjectID = agent.ID, agent.ProjectID
		if items, err = tx.Inbox(ctx, q); err != nil {
			return err
		}
		ms := make([]*Message, len(items))
		for i := range items {
			ms[i] = &items[i].Message
		}
		return withAttachmentViews(ctx, tx, proj, ms)
	})
	if err != nil {
		return nil, fmt.Errorf("fetching inbox: %w", err)
	}
	s.touchIfStale(ctx, agent)
	return viewsOf(items, func(it InboxItem) FetchEntry {
		return FetchEntry{InboxEntry: inboxEntry(it, p.IncludeBodies), ReadTS: ts(it.ReadAt), AckTS: ts(it.AckAt)}
	}), nil
}

func inboxEntry(it InboxItem, withBody bool) InboxEntry {
	return InboxEntry{MessageCore: messageCore(it.Message, withBody), Kind: it.Kind}
}

func inboxQuery(p InboxParams) (InboxQuery, error) {
	q := InboxQuery{Limit: p.Limit, UnreadOnly: p.UnreadOnly, UrgentOnly: p.UrgentOnly, ThreadID: strings.TrimSpace(p.ThreadID), WithBodies: p.IncludeBodies}
	if q.Limit < 0 {
		return q, invalid("limit must be between 1 and %d (got %d)", maxInboxLimit, p.Limit)
	}
	q.Limit = listLimit(q.Limit)
	if p.SinceTS != "" {
		t, err := ParseTimestamp(p.SinceTS)
		if err != nil {
			return q, err
		}
		q.Since = t
	}
	return q, nil
}

// ParseTimestamp accepts ISO-8601 timestamps as clients write them
// (RFC 3339, with or without fraction or zone; no zone means UTC).
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02T15:04Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid("since_ts %q is not an ISO-8601 timestamp (e.g. 2025-01-01T14:30:00Z)", s)
}

// touchIfStale records that a reading agent is alive, at most once a minute,
// so that polling an inbox is a pure read almost every time.
func (s *Service) touchIfStale(ctx context.Context, a Agent) {
	now := s.clock()
	if a.ID == 0 || !touchNeeded(a, now) {
		return
	}
	if err := s.st.Write(ctx, func(tx Tx) error { return tx.TouchAgent(ctx, a.ID, now) }); err != nil {
		s.log.Warn("recording agent activity", "agent", a.Name, "err", err)
		return
	}
	s.agents.touched(a, now, time.Minute)
}

// MarkRead records that the agent read a message (idempotent: the first
// time is kept).
func (s *Service) MarkRead(ctx context.Context, projectKey, agentName string, messageID int64) (ReadResult, error) {
	c, err := s.updateCopy(ctx, projectKey, agentName, messageID, Tx.SetRead)
	if err != nil {
		return ReadResult{}, fmt.Errorf("marking message read: %w", err)
	}
	return ReadResult{MessageID: messageID, Read: true, ReadAt: ts(c.ReadAt)}, nil
}

// Acknowledge records that the agent acknowledged a message; it marks it
// read too. Idempotent.
func (s *Service) Acknowledge(ctx context.Context, projectKey, agentName string, messageID int64) (AckResult, error) {
	c, err := s.updateCopy(ctx, projectKey, agentName, messageID, Tx.SetAck)
	if err != nil {
		return AckResult{}, fmt.Errorf("acknowledging message: %w", err)
	}
	return AckResult{MessageID: messageID, Acknowledged: true, AcknowledgedAt: ts(c.AckAt), ReadAt: ts(c.ReadAt)}, nil
}

// updateCopy records, with set, a time on the agent's delivered copy of a
// message, and returns the copy as it is then, in one write transaction.
func (s *Service) updateCopy(ctx context.Context, projectKey, agentName string, messageID int64,
	set func(tx Tx, ctx context.Context, messageID, agentID int64, at time.Time) error) (Recipient, error) {
	var c Recipient
	err := s.st.Write(ctx, func(tx Tx) error {
		_, a, err := s.projectAgent(ctx, tx, projectKey, agentName)
		if err != nil {
			return err
		}
		cp, err := tx.Copy(ctx, messageID, a.ID)
		if errors.Is(err, ErrNotFound) || err == nil && cp.Held() {
			return newError("NOT_FOUND", ErrMessageNotFound,
				"Message %d not found in the inbox of '%s' (it was not sent to them). Use the id of a message from fetch_inbox.", messageID, a.Name)
		} else if err != nil {
			return err
		}
		now := s.clock()
		if err := set(tx, ctx, messageID, a.ID, now); err != nil {
			return err
		}
		if err := tx.TouchAgent(ctx, a.ID, now); err != nil {
			return err
		}
		c, err = tx.Copy(ctx, messageID, a.ID)
		return err
	})
	return c, err
}

// MessageDetail returns one message of a project with its addressing.
func (s *Service) MessageDetail(ctx context.Context, projectKey string, id int64) (MessagePayload, error) {
	var m Message
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		if m, err = s.message(ctx, tx, proj, id); err != nil {
			return err
		}
		return withAttachmentViews(ctx, tx, proj, []*Message{&m})
	})
	if err != nil {
		return MessagePayload{}, fmt.Errorf("reading message: %w", err)
	}
	return messagePayload(m, true), nil
}

// threadLimit is how many messages a thread read returns at most.
const threadLimit = 10000

// Thread returns a thread's messages, oldest first.
func (s *Service) Thread(ctx context.Context, projectKey, threadID string, includeBodies bool) (ThreadResource, error) {
	out := ThreadResource{ThreadID: threadID, Limit: threadLimit, Messages: []MessagePayload{}}
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		out.Project = proj.HumanKey
		ms, err := s.threadMessages(ctx, tx, proj, threadID, threadLimit+1, includeBodies)
		if err != nil {
			return err
		}
		if len(ms) > threadLimit {
			ms, out.Truncated = ms[:threadLimit], true
		}
		ptrs := make([]*Message, len(ms))
		for i := range ms {
			ptrs[i] = &ms[i]
		}
		if err := withAttachmentViews(ctx, tx, proj, ptrs); err != nil {
			return err
		}
		for _, m := range ms {
			out.Messages = append(out.Messages, messagePayload(m, includeBodies))
		}
		return nil
	})
	if err != nil {
		return ThreadResource{}, fmt.Errorf("reading thread: %w", err)
	}
	return out, nil
}

// MessagesAfter returns a project's messages whose id is above afterID,
// oldest first, at most limit (1 to 1000), with their recipients and
// without bodies: a cursor over the project's traffic, which mailgate watch
// follows by asking again with the last id it showed.
func (s *Service) MessagesAfter(ctx context.Context, projectKey string, afterID int64, limit int) ([]MessagePayload, error) {
	limit = min(max(limit, 1), 1000)
	out := []MessagePayload{}
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		ms, err := tx.MessagesAfter(ctx, proj.ID, afterID, limit)
		if err != nil || len(ms) == 0 {
			return err
		}
		if err := s.withRecipients(ctx, tx, ms); err != nil {
			return err
		}
		for _, m := range ms {
			out = append(out, messagePayload(m, false))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing messages: %w", err)
	}
	return out, nil
}

// threadMessages loads a thread with recipients.
func (s *Service) threadMessages(ctx context.Context, tx Tx, p Project, threadID string, limit int, withBodies bool) ([]Message, error) {
	ms, err := tx.Thread(ctx, p.ID, threadID, limit, withBodies)
	if err != nil || len(ms) == 0 {
		return ms, err
	}
	if err := s.withRecipients(ctx, tx, ms); err != nil {
		return nil, err
	}
	return ms, nil
}

// InboxView is resource://inbox: the same listing as fetch_inbox, wrapped.
func (s *Service) InboxView(ctx context.Context, projectKey, agentName string, limit int, includeBodies bool) (InboxResource, error) {
	items, err := s.FetchInbox(ctx, InboxParams{ProjectKey: projectKey, Agent: agentName, Limit: limit, IncludeBodies: includeBodies})
	if err != nil {
		return InboxResource{}, err
	}
	out := InboxResource{Agent: agentName, Messages: make([]InboxEntry, 0, len(items))}
	err = s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err == nil {
			out.Project = proj.HumanKey
			var a Agent
			if a, err = s.agent(ctx, tx, proj, agentName); err == nil {
				out.Agent = a.Name
			}
		}
		return err
	})
	if err != nil {
		return InboxResource{}, fmt.Errorf("reading inbox: %w", err)
	}
	for _, it := range items {
		out.Messages = append(out.Messages, it.InboxEntry)
	}
	out.Count = len(out.Messages)
	return out, nil
}

// withRecipients fills each message's recipients (one query for all) and
// qualifies its names for display.
func (s *Service) withRecipients(ctx context.Context, tx Tx, ms []Message) error {
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	rs, err := tx.Recipients(ctx, ids)
	if err != nil {
		return err
	}
	for i := range ms {
		ms[i].Recipients = rs[ms[i].ID]
		if err := s.qualify(ctx, tx, &ms[i]); err != nil {
			return err
		}
	}
	return nil
}
