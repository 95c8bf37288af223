package mirror

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/outbox"
)

// Mailbox is the part of Gmail the mirror uses: *gmail.Client implements it
// (internal/gmail is the one Gmail adapter, with its one retry policy), and
// tests wrap it to inject failures or watch the inserts.
type Mailbox interface {
	// Insert stores raw with messages.insert (never sent), in threadID
	// when not "", with labelIDs. One attempt: a retry is the outbox's,
	// after FindRFC822.
	Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (Ref, error)
	// FindRFC822 looks a message up by its Message-ID header (trash and
	// spam included, so a copy the user deleted is not inserted again).
	FindRFC822(ctx context.Context, messageID string) (Ref, bool, error)
	// LabelID returns the id of the user label called name, "" if none.
	LabelID(ctx context.Context, name string) (string, error)
	// CreateLabel creates a user label; ErrLabelExists on 409.
	CreateLabel(ctx context.Context, name string) (string, error)
}

// Ref identifies a Gmail message.
type Ref = gmail.MessageRef

// ErrLabelExists: labels.create answered 409 (another process won).
var ErrLabelExists = gmail.ErrLabelExists

var _ Mailbox = (*gmail.Client)(nil)

// transientMailbox returns a Mailbox's failures that clear up on their own
// (Gmail's rate limits and 5xx, network failures: gmail.Transient) as
// *outbox.TransientError, so the worker pauses for the wait Gmail asked for
// instead of hammering it row by row.
type transientMailbox struct{ Mailbox }

func transient(err error) error {
	if wait, ok := gmail.Transient(err); ok {
		return &outbox.TransientError{Wait: wait, Err: err}
	}
	return err
}

func (m transientMailbox) Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (Ref, error) {
	r, err := m.Mailbox.Insert(ctx, raw, threadID, labelIDs)
	return r, transient(err)
}

func (m transientMailbox) FindRFC822(ctx context.Context, messageID string) (Ref, bool, error) {
	r, ok, err := m.Mailbox.FindRFC822(ctx, messageID)
	return r, ok, transient(err)
}

func (m transientMailbox) LabelID(ctx context.Context, name string) (string, error) {
	id, err := m.Mailbox.LabelID(ctx, name)
	return id, transient(err)
}

func (m transientMailbox) CreateLabel(ctx context.Context, name string) (string, error) {
	id, err := m.Mailbox.CreateLabel(ctx, name)
	if err != nil && !isLabelExists(err) {
		err = transient(err)
	}
	return id, err
}
