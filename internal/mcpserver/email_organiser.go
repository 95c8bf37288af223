package mcpserver

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
)

// Organiser is what the tools that page, read attachments, edit drafts and
// organise mail (issue 17) need from Gmail, beside Mailbox's first methods
// (internal/gmail.Client implements both).
type Organiser interface {
	SearchPage(ctx context.Context, query string, limit int, pageToken string) (*gmail.Page, error)
	GetAttachment(ctx context.Context, messageID, attachmentID string) ([]byte, error)
	ListDrafts(ctx context.Context, query string, limit int, pageToken string) (*gmail.DraftPage, error)
	GetDraft(ctx context.Context, id string) (*gmail.Draft, error)
	UpdateDraft(ctx context.Context, id string, raw []byte, threadID string) (gmail.DraftRef, error)
	ListLabels(ctx context.Context) ([]gmail.Label, error)
	ModifyMessages(ctx context.Context, ids []string, ch gmail.LabelChange) (int, error)
	ModifyThread(ctx context.Context, id string, ch gmail.LabelChange) ([]gmail.MessageLabels, error)
	UntrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error)
	UntrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error)
}

var _ Organiser = (*gmail.Client)(nil)
