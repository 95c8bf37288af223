package main

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
)

// The thread reads (mcpserver.ThreadReader) and the send-as list
// (mcpserver.SendAsLister), connecting first like every
// other Mailbox method.

func (g *gmailConn) SearchThreads(ctx context.Context, query string, limit int, pageToken string) (*gmail.ThreadPage, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.ThreadPage, error) { return c.SearchThreads(ctx, query, limit, pageToken) })
}

func (g *gmailConn) ThreadMessageIDs(ctx context.Context, id string) ([]string, error) {
	return with(ctx, g, func(c *gmail.Client) ([]string, error) { return c.ThreadMessageIDs(ctx, id) })
}

func (g *gmailConn) Messages(ctx context.Context, ids []string) ([]*gmail.Message, error) {
	return with(ctx, g, func(c *gmail.Client) ([]*gmail.Message, error) { return c.Messages(ctx, ids) })
}

func (g *gmailConn) SendAsAliases(ctx context.Context) ([]gmail.SendAs, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.SendAs, error) { return c.SendAsAliases(ctx) })
}
