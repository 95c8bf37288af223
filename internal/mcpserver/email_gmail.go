package mcpserver

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
)

// How the email tools reach Gmail. EmailDeps.Gmail is called once at the
// start of every email tool call (as github-mcp-server's handlers call
// deps.GetClient): its error is the call's whole answer (a server started
// before `mailgate auth` says what to run, gmail.NotConnectedError), and
// the Mailbox it returns is the one the call works on (emailCall). So a
// new Gmail method needs no forwarder: it is on *gmail.Client, and on
// Mailbox through the concept it belongs to.

// Mailbox is what the email tools need from Gmail (internal/gmail.Client),
// by concept.
type Mailbox interface {
	GmailReader
	GmailDrafts
	GmailLabels
	GmailSender
	SettingsAdmin // labels, filters, vacation, unsubscribe (email_settings.go)
}

var _ Mailbox = (*gmail.Client)(nil)

// GmailReader reads mail: search_email (by_thread too), read_email,
// read_thread, get_attachment, a
// reply's parent and reply-all's own addresses, forward_email's original,
// the "never written to" warning (HasSentTo) and settling sends of unknown
// outcome (FindRFC822, SentLookup).
type GmailReader interface {
	SearchPage(ctx context.Context, query string, limit int, pageToken string) (*gmail.Page, error)
	Message(ctx context.Context, id string) (*gmail.Message, error)
	Thread(ctx context.Context, id string) ([]*gmail.Message, error)
	SearchThreads(ctx context.Context, query string, limit int, pageToken string) (*gmail.ThreadPage, error)
	ThreadMessageIDs(ctx context.Context, id string) ([]string, error)
	Messages(ctx context.Context, ids []string) ([]*gmail.Message, error)
	GetAttachment(ctx context.Context, messageID, attachmentID string) ([]byte, error)
	ReplyParent(ctx context.Context, threadID, messageID string) (*gmail.ReplyParent, error)
	OwnAddresses(ctx context.Context) ([]string, error)
	HasSentTo(ctx context.Context, addr string) (bool, error)
	FindRFC822(ctx context.Context, messageID string) (gmail.MessageRef, bool, error)
	SendAsAliases(ctx context.Context) ([]gmail.SendAs, error) // the from of a send, draft, reply or forward
}

// GmailDrafts writes and reads drafts: draft_email, list_drafts,
// update_draft, and send_draft's read of the draft it sends.
type GmailDrafts interface {
	CreateDraft(ctx context.Context, raw []byte, threadID string) (string, error)
	ListDrafts(ctx context.Context, query string, limit int, pageToken string) (*gmail.DraftPage, error)
	GetDraft(ctx context.Context, id string) (*gmail.Draft, error)
	UpdateDraft(ctx context.Context, id string, raw []byte, threadID string) (gmail.DraftRef, error)
	DraftRaw(ctx context.Context, id string) ([]byte, gmail.DraftRef, error)
}

// GmailLabels changes labels, the trash included: list_labels,
// modify_labels, trash_email, untrash_email.
type GmailLabels interface {
	ListLabels(ctx context.Context) ([]gmail.Label, error)
	ModifyMessages(ctx context.Context, ids []string, ch gmail.LabelChange) (int, error)
	ModifyThread(ctx context.Context, id string, ch gmail.LabelChange) ([]gmail.MessageLabels, error)
	TrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error)
	TrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error)
	UntrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error)
	UntrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error)
}

// GmailSender sends, and only the gate's SendFunc calls it: send_email,
// reply_email, forward_email, send_draft.
type GmailSender interface {
	Send(ctx context.Context, raw []byte, threadID string) (*gmail.Sent, error)
	SendDraft(ctx context.Context, draftID string, raw []byte, threadID string) (*gmail.Sent, error)
}

// GmailOf is the getter of a mailbox that is always connected (a client
// made at start: the sandbox, tests).
func GmailOf(mb Mailbox) func(context.Context) (Mailbox, error) {
	return func(context.Context) (Mailbox, error) { return mb, nil }
}

// GmailConnector is the getter of a connection made on first use
// (gmail.Connector): its error, until `mailgate auth` has run, is what every
// email tool answers.
func GmailConnector(c *gmail.Connector) func(context.Context) (Mailbox, error) {
	return func(ctx context.Context) (Mailbox, error) {
		client, err := c.Get(ctx)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return client, nil
	}
}

// emailCall is one email tool call: the tool set's handlers with the
// mailbox the call got from EmailDeps.Gmail.
type emailCall struct {
	*emailHandlers
	gm Mailbox
}
