package agentmail

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The mailbox compatibility set: four tools for agents identified by their
// tmux window (or AGENT_NAME). A mailbox identity is the core agent of the
// same name in the project, so mailbox mail is ordinary agent mail: a send
// is a message with one delivered copy, receive pops the oldest unread
// delivered copy of the caller's inbox (whatever set sent it) and marks it
// read. Contact policies are not applied: the original system has none,
// and recipients are limited to the session's windows anyway.

// MailboxMaxBytes is the largest message the mailbox set accepts (64 KiB).
const MailboxMaxBytes = 65536

// Mailbox statuses.
const (
	MailboxReady   = "ready"
	MailboxWork    = "work"
	MailboxOffline = "offline"
)

// ErrMailboxTooLarge is returned for messages over MailboxMaxBytes.
var ErrMailboxTooLarge = errors.New("message exceeds maximum size of 64KB")

// MailboxState is an agent's mailbox availability.
type MailboxState struct {
	AgentID    int64
	Status     string
	UpdatedAt  time.Time
	NotifiedAt time.Time // zero: not notified since the last reset
}

// MailboxTx is what the mailbox set needs from a transaction beyond Tx.
type MailboxTx interface {
	// OldestUnread returns the agent's oldest delivered, unread message
	// (ErrNotFound if none).
	OldestUnread(ctx context.Context, agentID int64) (Message, error)
	// SetMailboxStatus stores the status; resetNotified clears NotifiedAt.
	SetMailboxStatus(ctx context.Context, agentID int64, status string, at time.Time, resetNotified bool) error
	// MailboxState returns the stored status (ErrNotFound if never set).
	MailboxState(ctx context.Context, agentID int64) (MailboxState, error)
}

func mbTx(tx Tx) (interface {
	Tx
	MailboxTx
}, error) {
	m, ok := tx.(interface {
		Tx
		MailboxTx
	})
	if !ok {
		return nil, errUnsupported
	}
	return m, nil
}

// Mailbox is the mailbox set over a Service, for one project.
type Mailbox struct {
	s          *Service
	projectKey string
	projMu     sync.Mutex
	projOK     bool
}

// Mailbox returns the mailbox set for the project at projectKey (an
// absolute path; created on first use).
func (s *Service) Mailbox(projectKey string) *Mailbox { return &Mailbox{s: s, projectKey: projectKey} }

func (m *Mailbox) ensureProject(ctx context.Context) error {
	m.projMu.Lock()
	defer m.projMu.Unlock()
	if m.projOK {
		return nil
	}
	if _, err := m.s.EnsureProject(ctx, m.projectKey); err != nil {
		return err
	}
	m.projOK = true
	return nil
}

// CheckMailboxMessage applies the size and emptiness rules of send.
func CheckMailboxMessage(message string) error {
	if message == "" {
		return plain(ErrInvalidArgument, "no message provided")
	}
	if len(message) > MailboxMaxBytes {
		return newError("INVALID_ARGUMENT", ErrMailboxTooLarge, "message exceeds maximum size of 64KB (%d bytes; the limit is %d)", len(message), MailboxMaxBytes)
	}
	return nil
}

// mailboxSubject is the subject a mailbox message gets in the core: its
// first line, cut to 80 characters, so agentmail listings stay readable.
func mailboxSubject(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > 80 {
		line = string([]rune(line)[:80]) + "…"
	}
	if line == "" {
		line = "(mailbox message)"
	}
	return line
}

// Send stores message from sender to recipient (both mailbox identities,
// validated by the caller against the session's windows) and returns its
// id. Missing core agents are created.
func (m *Mailbox) Send(ctx context.Context, sender, recipient, message string) (int64, error) {
	if err := CheckMailboxMessage(message); err != nil {
		return 0, err
	}
	if err := m.ensureProject(ctx); err != nil {
		return 0, err
	}
	var id int64
	err := m.s.st.Write(ctx, func(tx Tx) error {
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		now := m.s.clock()
		from, err := ensureCoreAgent(ctx, tx, p, sender, "mailbox", now)
		if err != nil {
			return err
		}
		to, err := ensureCoreAgent(ctx, tx, p, recipient, "mailbox", now)
		if err != nil {
			return err
		}
		msg := Message{ProjectID: p.ID, SenderID: from.ID, Subject: mailboxSubject(message), BodyMD: message,
			Importance: ImportanceNormal, CreatedAt: now,
			Recipients: []Recipient{{AgentID: to.ID, AgentName: to.Name, ProjectID: p.ID, Kind: KindTo, DeliveredAt: now}}}
		if err := tx.InsertMessage(ctx, &msg); err != nil {
			return err
		}
		id = msg.ID
		return tx.TouchAgent(ctx, from.ID, now)
	})
	return id, err
}

// MailboxMessage is receive's answer when there is mail.
type MailboxMessage struct {
	From    string `json:"from"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// Receive pops the oldest unread message of agent (FIFO) and marks it
// read; ok is false when there is none.
func (m *Mailbox) Receive(ctx context.Context, agent string) (msg MailboxMessage, ok bool, err error) {
	if err := m.ensureProject(ctx); err != nil {
		return MailboxMessage{}, false, err
	}
	// Polling an empty mailbox is the common case: look in a read
	// transaction first, so it never takes the write lock.
	var any bool
	err = m.s.st.Read(ctx, func(t Tx) error {
		tx, err := mbTx(t)
		if err != nil {
			return err
		}
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if err == nil {
			_, err = tx.OldestUnread(ctx, a.ID)
		}
		any = err == nil
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil || !any {
		return MailboxMessage{}, false, err
	}
	err = m.s.st.Write(ctx, func(t Tx) error {
		ok = false
		tx, err := mbTx(t)
		if err != nil {
			return err
		}
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if errors.Is(err, ErrNotFound) {
			return nil // never addressed: no mail
		} else if err != nil {
			return err
		}
		got, err := tx.OldestUnread(ctx, a.ID)
		if errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if err := tx.SetRead(ctx, got.ID, a.ID, m.s.clock()); err != nil {
			return err
		}
		msg, ok = MailboxMessage{From: got.SenderName, ID: strconv.FormatInt(got.ID, 10), Message: got.BodyMD}, true
		return nil
	})
	return msg, ok, err
}

// InvalidMailboxStatus is the refusal of an unknown status.
func InvalidMailboxStatus(status string) error {
	return plain(ErrInvalidArgument, "Invalid status: %s. Valid: ready, work, offline", status)
}

// SetStatus sets agent's availability; work and offline reset the notified
// flag (so the agent is notified again once it is ready).
func (m *Mailbox) SetStatus(ctx context.Context, agent, status string) error {
	switch status {
	case MailboxReady, MailboxWork, MailboxOffline:
	default:
		return InvalidMailboxStatus(status)
	}
	if err := m.ensureProject(ctx); err != nil {
		return err
	}
	return m.s.st.Write(ctx, func(t Tx) error {
		tx, err := mbTx(t)
		if err != nil {
			return err
		}
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		now := m.s.clock()
		a, err := ensureCoreAgent(ctx, tx, p, agent, "mailbox", now)
		if err != nil {
			return err
		}
		return tx.SetMailboxStatus(ctx, a.ID, status, now, status == MailboxWork || status == MailboxOffline)
	})
}

// State returns agent's stored mailbox state (ErrNotFound if never set).
func (m *Mailbox) State(ctx context.Context, agent string) (MailboxState, error) {
	if err := m.ensureProject(ctx); err != nil {
		return MailboxState{}, err
	}
	var out MailboxState
	err := m.s.st.Read(ctx, func(t Tx) error {
		tx, err := mbTx(t)
		if err != nil {
			return err
		}
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if err != nil {
			return err
		}
		out, err = tx.MailboxState(ctx, a.ID)
		return err
	})
	return out, err
}

// ProgramChannels is the program of a core agent the channels set created.
const ProgramChannels = "channels"

// AgentNames lists the project's agents that can read mailbox mail, for
// recipients outside tmux, and apart (channelsOnly) those that never can:
// agents of the channels set, which read channels and have no inbox. An
// agent created by the channels set that has also used the mailbox (set a
// status) or registered through agentmail (which sets its program) reads
// its inbox and is a recipient.
func (m *Mailbox) AgentNames(ctx context.Context) (readers, channelsOnly []string, err error) {
	if err := m.ensureProject(ctx); err != nil {
		return nil, nil, err
	}
	err = m.s.st.Read(ctx, func(t Tx) error {
		readers, channelsOnly = nil, nil
		tx, err := mbTx(t)
		if err != nil {
			return err
		}
		p, err := m.s.project(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		as, err := tx.Agents(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Program == ProgramChannels {
				_, err := tx.MailboxState(ctx, a.ID)
				if errors.Is(err, ErrNotFound) {
					channelsOnly = append(channelsOnly, a.Name)
					continue
				} else if err != nil {
					return err
				}
			}
			readers = append(readers, a.Name)
		}
		return nil
	})
	return readers, channelsOnly, err
}

// MarkNotified records that agent was told about unread mail (what the
// original's notifier does; status work/offline clears it again).
func (m *Mailbox) MarkNotified(ctx context.Context, agent string) error {
	if err := m.ensureProject(ctx); err != nil {
		return err
	}
	return m.s.st.Write(ctx, func(t Tx) error {
		n, ok := t.(interface {
			SetMailboxNotified(ctx context.Context, agentID int64, at time.Time) error
		})
		if !ok {
			return errUnsupported
		}
		p, err := m.s.project(ctx, t, m.projectKey)
		if err != nil {
			return err
		}
		a, err := t.AgentByName(ctx, p.ID, agent)
		if err != nil {
			return err
		}
		return n.SetMailboxNotified(ctx, a.ID, m.s.clock())
	})
}
