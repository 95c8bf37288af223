package main

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mcpserver"
)

// gmailConn's methods beyond the first five tools' (paging, attachments, drafts,
// labels, untrash, send_draft, trash, reply-all): each connects first, as
// every other method does.

var _ mcpserver.Organiser = (*gmailConn)(nil)

// with runs call on the connected client, or answers the connection error.
func with[T any](ctx context.Context, g *gmailConn, call func(*gmail.Client) (T, error)) (T, error) {
	c, err := g.get(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return call(c)
}

func (g *gmailConn) SearchPage(ctx context.Context, query string, limit int, pageToken string) (*gmail.Page, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Page, error) { return c.SearchPage(ctx, query, limit, pageToken) })
}

func (g *gmailConn) GetAttachment(ctx context.Context, messageID, attachmentID string) ([]byte, error) {
	return with(ctx, g, func(c *gmail.Client) ([]byte, error) { return c.GetAttachment(ctx, messageID, attachmentID) })
}

func (g *gmailConn) ListDrafts(ctx context.Context, query string, limit int, pageToken string) (*gmail.DraftPage, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.DraftPage, error) { return c.ListDrafts(ctx, query, limit, pageToken) })
}

func (g *gmailConn) GetDraft(ctx context.Context, id string) (*gmail.Draft, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Draft, error) { return c.GetDraft(ctx, id) })
}

func (g *gmailConn) UpdateDraft(ctx context.Context, id string, raw []byte, threadID string) (gmail.DraftRef, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.DraftRef, error) { return c.UpdateDraft(ctx, id, raw, threadID) })
}

func (g *gmailConn) ListLabels(ctx context.Context) ([]gmail.Label, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.Label, error) { return c.ListLabels(ctx) })
}

func (g *gmailConn) ModifyMessages(ctx context.Context, ids []string, ch gmail.LabelChange) (int, error) {
	return with(ctx, g, func(c *gmail.Client) (int, error) { return c.ModifyMessages(ctx, ids, ch) })
}

func (g *gmailConn) ModifyThread(ctx context.Context, id string, ch gmail.LabelChange) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.ModifyThread(ctx, id, ch) })
}

func (g *gmailConn) UntrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.MessageLabels, error) { return c.UntrashMessage(ctx, id) })
}

func (g *gmailConn) UntrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.UntrashThread(ctx, id) })
}

func (g *gmailConn) DraftRaw(ctx context.Context, id string) ([]byte, gmail.DraftRef, error) {
	c, err := g.get(ctx)
	if err != nil {
		return nil, gmail.DraftRef{}, err
	}
	return c.DraftRaw(ctx, id)
}

func (g *gmailConn) SendDraft(ctx context.Context, draftID string, raw []byte, threadID string) (*gmail.Sent, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Sent, error) { return c.SendDraft(ctx, draftID, raw, threadID) })
}

func (g *gmailConn) TrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.MessageLabels, error) { return c.TrashMessage(ctx, id) })
}

func (g *gmailConn) TrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.TrashThread(ctx, id) })
}

func (g *gmailConn) OwnAddresses(ctx context.Context) ([]string, error) {
	return with(ctx, g, func(c *gmail.Client) ([]string, error) { return c.OwnAddresses(ctx) })
}
