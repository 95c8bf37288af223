package gmail

import (
	"context"

	gmailapi "google.golang.org/api/gmail/v1"
)

// ListHeaders are what unsubscribe reads of a message (RFC 2369's
// List-Unsubscribe, RFC 8058's List-Unsubscribe-Post), with who sent it
// and what DKIM said (Authentication-Results, as Gmail wrote it on
// receipt): RFC 8058 asks a one-click POST only of a message whose DKIM
// signature covers both headers, and the approver is shown the verdict.
type ListHeaders struct {
	ID, ThreadID, From, Subject, Date    string
	ListUnsubscribe, ListUnsubscribePost string
	AuthenticationResults                string
}

var listHeaderNames = []string{"From", "Subject", "Date", "List-Unsubscribe", "List-Unsubscribe-Post", "Authentication-Results"}

// ListUnsubscribe reads the unsubscribe headers of one message
// (format=metadata: no body is fetched). ErrNotFound if the id is unknown.
func (c *Client) ListUnsubscribe(ctx context.Context, id string) (ListHeaders, error) {
	m, err := retry(ctx, c, "messages.get", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Get(user, id).Format("metadata").MetadataHeaders(listHeaderNames...).Context(ctx).Do()
	})
	if err := callError(err, ErrNotFound, "fetching message %s", id); err != nil {
		return ListHeaders{}, err
	}
	h := headerMap(m.Payload)
	return ListHeaders{ID: m.Id, ThreadID: m.ThreadId, From: h.get("From"), Subject: h.get("Subject"), Date: h.get("Date"),
		ListUnsubscribe: h.get("List-Unsubscribe"), ListUnsubscribePost: h.get("List-Unsubscribe-Post"),
		AuthenticationResults: h.get("Authentication-Results")}, nil
}
