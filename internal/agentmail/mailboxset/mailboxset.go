// Package mailboxset is the mailbox tool set of agent mail: the four tools
// (send, receive, status, list-recipients) of the tmux agent-mail CLI, for
// agents identified by their tmux window or AGENT_NAME (MAILGATE_TOOLS=
// mailbox), and the import of that system's .agentmail/ directory.
//
// "Mailbox" names three things in this project; this package is the tool
// set. The Gmail mailbox belongs to internal/gmail (and the mirror), and an
// agent's inbox of delivered copies to the core (agentmail.InboxQuery).
//
// It is an adapter beside the agent-mail core: it uses the core's public
// API (agentmail.Service) and a storage port of its own (Store), which both
// engines implement. A mailbox identity is the core agent of the same name
// in the project, so mailbox mail is ordinary agent mail: a send is a
// message with one delivered copy, receive pops the oldest unread delivered
// copy of the caller's inbox (whatever set sent it) and marks it read.
// Contact policies are not applied: the original system has none, and
// recipients are limited to the session's windows anyway. The set's own
// tables (am_mb_status, am_mb_imports) are read and written by sql.go: one
// body of SQL for both engines.
package mailboxset

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
)

// MaxBytes is the largest message the mailbox set accepts (64 KiB).
const MaxBytes = 65536

// Program is the program of a core agent the set created.
const Program = "mailbox"

// Statuses.
const (
	Ready   = "ready"
	Work    = "work"
	Offline = "offline"
)

// ErrTooLarge is returned for messages over MaxBytes.
var ErrTooLarge = errors.New("message exceeds maximum size of 64KB")

// State is an agent's mailbox availability.
type State struct {
	AgentID    int64
	Status     string
	UpdatedAt  time.Time
	NotifiedAt time.Time // zero: not notified since the last reset
}

// Tables is what the set keeps beside the core's tables.
type Tables interface {
	// OldestUnread returns the id of the agent's oldest delivered, unread
	// message (agentmail.ErrNotFound if none).
	OldestUnread(ctx context.Context, agentID int64) (int64, error)
	// SetMailboxStatus stores the status; resetNotified clears NotifiedAt.
	SetMailboxStatus(ctx context.Context, agentID int64, status string, at time.Time, resetNotified bool) error
	// MailboxState returns the stored status (agentmail.ErrNotFound if never set).
	MailboxState(ctx context.Context, agentID int64) (State, error)
	// SetMailboxNotified records that the agent was told about unread mail.
	SetMailboxNotified(ctx context.Context, agentID int64, at time.Time) error
	// ClaimMailboxImport records an imported message; false when it was
	// imported before.
	ClaimMailboxImport(ctx context.Context, projectID int64, mailbox, origID string) (bool, error)
}

// Tx is one transaction of the set: the core's tables and the set's.
type Tx interface {
	agentmail.Tx
	Tables
}

// Store is the set's storage port (see agentmail.Port), on the same
// database as the core's store (SQLStore; amstore.Store.Mailboxes).
type Store = agentmail.Port[Tx]

// Set is the mailbox set over a Service, for one project.
type Set struct {
	s          *agentmail.Service
	st         Store
	projectKey string
	project    agentmail.ProjectOnce
}

// New returns the mailbox set of the service on st (the port on the
// service's database), for the project at projectKey (an absolute path;
// created on first use).
func New(s *agentmail.Service, st Store, projectKey string) *Set {
	return &Set{s: s, st: st, projectKey: projectKey}
}

// inProject runs fn in a write (or read) transaction, with the set's
// project, which the first call creates.
func (m *Set) inProject(ctx context.Context, write bool, fn func(Tx, agentmail.Project) error) error {
	if err := m.project.Ensure(ctx, m.s, m.projectKey); err != nil {
		return err
	}
	run := m.st.Read
	if write {
		run = m.st.Write
	}
	return run(ctx, func(tx Tx) error {
		p, err := m.s.ProjectIn(ctx, tx, m.projectKey)
		if err != nil {
			return err
		}
		return fn(tx, p)
	})
}

// CheckMessage applies the size and emptiness rules of send.
func CheckMessage(message string) error {
	if message == "" {
		return agentmail.Invalid("no message provided")
	}
	if len(message) > MaxBytes {
		return agentmail.NewError("INVALID_ARGUMENT", ErrTooLarge, "message exceeds maximum size of 64KB (%d bytes; the limit is %d)", len(message), MaxBytes)
	}
	return nil
}

// subject is the subject a mailbox message gets in the core: its
// first line, cut to 80 characters, so agentmail listings stay readable.
func subject(msg string) string {
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
func (m *Set) Send(ctx context.Context, sender, recipient, message string) (int64, error) {
	if err := CheckMessage(message); err != nil {
		return 0, err
	}
	var id int64
	err := m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
		now := m.s.Now()
		msg, err := deliver(ctx, tx, p, sender, recipient, message, now, now)
		if err != nil {
			return err
		}
		id = msg.ID
		return tx.TouchAgent(ctx, msg.SenderID, now)
	})
	return id, err
}

// deliver stores body from sender to recipient, sent and delivered at at,
// creating their core agents (at now) when missing.
func deliver(ctx context.Context, tx Tx, p agentmail.Project, sender, recipient, body string, at, now time.Time) (agentmail.Message, error) {
	from, err := agentmail.EnsureCompatAgent(ctx, tx, p, sender, Program, now)
	if err != nil {
		return agentmail.Message{}, err
	}
	to, err := agentmail.EnsureCompatAgent(ctx, tx, p, recipient, Program, now)
	if err != nil {
		return agentmail.Message{}, err
	}
	msg := agentmail.Message{ProjectID: p.ID, SenderID: from.ID, Subject: subject(body), BodyMD: body,
		Importance: agentmail.ImportanceNormal, CreatedAt: at,
		Recipients: []agentmail.Recipient{{AgentID: to.ID, AgentName: to.Name, ProjectID: p.ID, Kind: agentmail.KindTo, DeliveredAt: at}}}
	return msg, tx.InsertMessage(ctx, &msg)
}

// Message is receive's answer when there is mail.
type Message struct {
	From    string `json:"from"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// Receive pops the oldest unread message of agent (FIFO) and marks it
// read; ok is false when there is none.
func (m *Set) Receive(ctx context.Context, agent string) (msg Message, ok bool, err error) {
	// Polling an empty mailbox is the common case: look in a read
	// transaction first, so it never takes the write lock.
	var any bool
	err = m.inProject(ctx, false, func(tx Tx, p agentmail.Project) error {
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if err == nil {
			_, err = tx.OldestUnread(ctx, a.ID)
		}
		any = err == nil
		if errors.Is(err, agentmail.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil || !any {
		return Message{}, false, err
	}
	err = m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
		ok = false
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if errors.Is(err, agentmail.ErrNotFound) {
			return nil // never addressed: no mail
		} else if err != nil {
			return err
		}
		id, err := tx.OldestUnread(ctx, a.ID)
		if errors.Is(err, agentmail.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		got, err := tx.MessageByID(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.SetRead(ctx, got.ID, a.ID, m.s.Now()); err != nil {
			return err
		}
		msg, ok = Message{From: got.SenderName, ID: strconv.FormatInt(got.ID, 10), Message: got.BodyMD}, true
		return nil
	})
	return msg, ok, err
}

// InvalidStatus is the refusal of an unknown status.
func InvalidStatus(status string) error {
	return agentmail.Invalid("Invalid status: %s. Valid: ready, work, offline", status)
}

// SetStatus sets agent's availability; work and offline reset the notified
// flag (so the agent is notified again once it is ready).
func (m *Set) SetStatus(ctx context.Context, agent, status string) error {
	switch status {
	case Ready, Work, Offline:
	default:
		return InvalidStatus(status)
	}
	return m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
		now := m.s.Now()
		a, err := agentmail.EnsureCompatAgent(ctx, tx, p, agent, Program, now)
		if err != nil {
			return err
		}
		return tx.SetMailboxStatus(ctx, a.ID, status, now, status == Work || status == Offline)
	})
}

// State returns agent's stored mailbox state (agentmail.ErrNotFound if never set).
func (m *Set) State(ctx context.Context, agent string) (State, error) {
	var out State
	err := m.inProject(ctx, false, func(tx Tx, p agentmail.Project) error {
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if err != nil {
			return err
		}
		out, err = tx.MailboxState(ctx, a.ID)
		return err
	})
	return out, err
}

// AgentNames lists the project's agents that can read mailbox mail, for
// recipients outside tmux, and apart (channelsOnly) those that never can:
// agents of the channels set, which read channels and have no inbox. An
// agent created by the channels set that has also used the mailbox (set a
// status) or registered through agentmail (which sets its program) reads
// its inbox and is a recipient.
func (m *Set) AgentNames(ctx context.Context) (readers, channelsOnly []string, err error) {
	err = m.inProject(ctx, false, func(tx Tx, p agentmail.Project) error {
		readers, channelsOnly = nil, nil
		as, err := tx.Agents(ctx, p.ID)
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Program == channels.Program {
				_, err := tx.MailboxState(ctx, a.ID)
				if errors.Is(err, agentmail.ErrNotFound) {
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
func (m *Set) MarkNotified(ctx context.Context, agent string) error {
	return m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
		a, err := tx.AgentByName(ctx, p.ID, agent)
		if err != nil {
			return err
		}
		return tx.SetMailboxNotified(ctx, a.ID, m.s.Now())
	})
}
