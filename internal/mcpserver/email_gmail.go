package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/ctxkey"
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
	SettingsAdmin // labels, filters, vacation (email_settings.go)
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

// A new Gmail call that one tool alone makes goes in the tool's file, not
// on Mailbox: the file declares the small interface it needs, holds
// *gmail.Client to it at compile time (var _ yours =
// (*gmail.Client)(nil)), and asks the call's mailbox for it with gmailAs
// (email_unsubscribe.go does). So Mailbox (the calls of the earlier tools
// and the send path, by concept) needs no line. Every Mailbox in the tree
// is a *gmail.Client or embeds one (tests wrap it to change one method),
// so gmailAs finds the method; a mailbox without it is an error naming
// what it lacks, never a panic.
func gmailAs[T any](c *emailCall) (T, error) {
	gm, ok := c.gm.(T)
	if !ok {
		return gm, fmt.Errorf("this mailbox (%T) has no %v", c.gm, reflect.TypeFor[T]())
	}
	return gm, nil
}

// GmailGetter is EmailDeps.Gmail: the mailbox of a Gmail account of the
// home, by its name (internal/account; the caller resolves "" to
// account.Default). An account without a token answers
// *account.UnknownError, naming the accounts configured.
type GmailGetter func(ctx context.Context, account string) (Mailbox, error)

// GmailOf is the getter of one mailbox that is always connected (a client
// made at start: the sandbox, tests), the default account's.
func GmailOf(mb Mailbox) GmailGetter {
	return GmailAccounts(map[string]Mailbox{account.Default: mb})
}

// GmailAccounts is the getter of several mailboxes always connected, by
// account name (tests, the sandbox).
func GmailAccounts(mbs map[string]Mailbox) GmailGetter {
	return func(_ context.Context, name string) (Mailbox, error) {
		if mb, ok := mbs[account.Resolve(name)]; ok {
			return mb, nil
		}
		names := slices.Sorted(maps.Keys(mbs))
		if i := slices.Index(names, account.Default); i > 0 {
			names = append([]string{account.Default}, slices.Delete(names, i, i+1)...)
		}
		return nil, &account.UnknownError{Name: name, Configured: names}
	}
}

// GmailConnector is the getter of connections made on first use, one per
// account (gmail.Accounts): its error, until `mailgate auth` has run for
// the account, is what every email tool answers.
func GmailConnector(c *gmail.Accounts) GmailGetter {
	return func(ctx context.Context, name string) (Mailbox, error) {
		client, err := c.Get(ctx, name)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return client, nil
	}
}

// emailCall is one email tool call: the tool set's handlers with the
// mailbox the call got from EmailDeps.Gmail, for the account it names.
type emailCall struct {
	*emailHandlers
	gm Mailbox
	// account is the Gmail account of the call (resolved: never "");
	// reqAccount is what its requests and audit lines name: the account,
	// or "" for the default account of a home with one (so its files are
	// as they always were). Both bind alike (approval.accountChange).
	account, reqAccount string
	// sent is the account's own memory of its Sent folder (it shadows
	// emailHandlers.sent).
	sent *sentCache
	// detail is what the call's audit line says it did beyond its outcome
	// (emailHandlers.call), when its tool says more.
	detail string
}

// accountArg is the optional account every email tool takes (embedded in
// each input type; TestEveryEmailToolTakesAccount holds every tool to it).
type accountArg struct {
	Account string `json:"account,omitempty" jsonschema:"The Gmail account to use, by its name in mailgate (mailgate auth --account NAME adds one); omit for the default account. A send's approval is bound to its account"`
}

func (a accountArg) accountName() string { return a.Account }

var accountKey = ctxkey.New[string]("mcpserver.account")

// withAccount carries the account an email call's arguments name to
// emailHandlers.call.
func withAccount(ctx context.Context, in any) context.Context {
	if a, ok := in.(interface{ accountName() string }); ok {
		return accountKey.With(ctx, a.accountName())
	}
	return ctx
}

func accountOf(ctx context.Context) string {
	return account.Resolve(accountKey.Value(ctx))
}
