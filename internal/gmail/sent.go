package gmail

import (
	"context"
	"fmt"

	gmailapi "google.golang.org/api/gmail/v1"
)

// HasSentTo reports whether the Sent folder holds a message to addr: one
// messages.list call (in:sent to:addr, one result, ids only). The approval
// gate uses it to warn the human about a recipient never written to before.
func (c *Client) HasSentTo(ctx context.Context, addr string) (bool, error) {
	list, err := retry(ctx, c, "messages.list", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.ListMessagesResponse, error) {
		return c.svc.Users.Messages.List(user).Q(SentToQuery(addr)).MaxResults(1).Fields("messages(id)").Context(ctx).Do()
	})
	if err != nil {
		return false, fmt.Errorf("searching Sent: %w", err)
	}
	return len(list.Messages) > 0, nil
}

// SentToQuery is the Gmail query HasSentTo asks: Sent mail addressed to addr.
func SentToQuery(addr string) string {
	return `in:sent to:"` + addr + `"`
}
