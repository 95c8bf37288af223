package gmail

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"

	gmailapi "google.golang.org/api/gmail/v1"
)

// Drafts beyond CreateDraft (send.go): list, read, replace. Sending a draft
// is SendDraft (send.go), never retried.

// Draft is a draft with its message. In a list, Message holds the headers
// and snippet only (Text and Files empty); GetDraft fills everything.
// Gmail gives a draft's message a new id on every update, so MessageID
// (Message.ID) names one version of the draft's content.
type Draft struct {
	ID      string
	Message *Message
}

// DraftRef identifies a stored draft and the message that is its current
// content.
type DraftRef struct{ ID, MessageID, ThreadID string }

// DraftPage is one page of ListDrafts.
type DraftPage struct {
	Drafts             []Draft
	NextPageToken      string // "" on the last page
	ResultSizeEstimate int64
}

// ListDrafts lists one page of up to limit drafts (newest first, clamped to
// 1..500) matching query ("" for all), from pageToken ("" for the first
// page), with each draft's headers and snippet fetched like Search's
// (bounded, paced fan-out). A draft sent or deleted between the list and
// its get is left out.
func (c *Client) ListDrafts(ctx context.Context, query string, limit int, pageToken string) (*DraftPage, error) {
	limit = min(maxListResults, max(limit, 1))
	list, err := listPage(ctx, c, "drafts.list", ScopeCompose, "drafts", pageToken, func(ctx context.Context) (*gmailapi.ListDraftsResponse, error) {
		return c.svc.Users.Drafts.List(user).Q(query).MaxResults(int64(limit)).PageToken(pageToken).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	ids := mapped(atMost(list.Drafts, limit), func(d *gmailapi.Draft) string { return d.Id })
	drafts, err := fetchAll(ctx, c, "drafts.get", "draft", ids, func(ctx context.Context, id string) (*gmailapi.Draft, error) {
		return c.svc.Users.Drafts.Get(user, id).Format("metadata").Context(ctx).Do() // every header: drafts.get has no metadataHeaders
	}, toDraft)
	if err != nil {
		return nil, fmt.Errorf("listing drafts: %w", err)
	}
	return &DraftPage{Drafts: drafts, NextPageToken: list.NextPageToken, ResultSizeEstimate: list.ResultSizeEstimate}, nil
}

func toDraft(d *gmailapi.Draft) Draft {
	out := Draft{ID: d.Id}
	if d.Message != nil {
		out.Message = convert(d.Message)
	}
	return out
}

// GetDraft reads a draft in full (format=full): headers, text, attachments.
// ErrDraftNotFound when it was sent or deleted, or the id is malformed.
func (c *Client) GetDraft(ctx context.Context, id string) (*Draft, error) {
	d, err := c.getDraft(ctx, id, "full")
	if err != nil {
		return nil, err
	}
	out := toDraft(d)
	return &out, nil
}

// DraftRaw returns a draft's current content as RFC 822 bytes
// (format=raw) and the id of the message holding it: what an approval of
// send_draft binds, since any update changes both.
func (c *Client) DraftRaw(ctx context.Context, id string) (raw []byte, ref DraftRef, err error) {
	d, err := c.getDraft(ctx, id, "raw")
	if err != nil {
		return nil, DraftRef{}, err
	}
	if d.Message == nil {
		return nil, DraftRef{}, fmt.Errorf("fetching draft %s: Gmail returned no message", id)
	}
	raw, err = decodeData(d.Message.Raw)
	if err != nil {
		return nil, DraftRef{}, fmt.Errorf("decoding draft %s: %w", id, err)
	}
	return raw, DraftRef{ID: d.Id, MessageID: d.Message.Id, ThreadID: d.Message.ThreadId}, nil
}

func (c *Client) getDraft(ctx context.Context, id, format string) (*gmailapi.Draft, error) {
	if id == "" {
		return nil, fmt.Errorf("fetching draft: %w", ErrDraftNotFound)
	}
	d, err := retry(ctx, c, "drafts.get", ScopeCompose, true, func(ctx context.Context) (*gmailapi.Draft, error) {
		return c.svc.Users.Drafts.Get(user, id).Format(format).Context(ctx).Do()
	})
	if err := callError(err, ErrDraftNotFound, "fetching draft %s", id); err != nil {
		return nil, err
	}
	return d, nil
}

// UpdateDraft replaces draft id's content with raw (an RFC 822 message
// built elsewhere), in threadID's thread if not "". Retried like
// CreateDraft: a replace is idempotent and sends nothing. The answer names
// the new message id Gmail gave the content.
func (c *Client) UpdateDraft(ctx context.Context, id string, raw []byte, threadID string) (DraftRef, error) {
	if id == "" {
		return DraftRef{}, fmt.Errorf("updating draft: %w", ErrDraftNotFound)
	}
	if len(raw) > maxRawBytes {
		return DraftRef{}, fmt.Errorf("updating draft: message is %d bytes, over Gmail's %d", len(raw), maxRawBytes)
	}
	d := &gmailapi.Draft{Id: id, Message: &gmailapi.Message{Raw: base64.URLEncoding.EncodeToString(raw), ThreadId: threadID}}
	out, err := retry(ctx, c, "drafts.update", ScopeCompose, true, func(ctx context.Context) (*gmailapi.Draft, error) {
		return c.svc.Users.Drafts.Update(user, id, d).Context(ctx).Do()
	})
	if StatusCode(err) == http.StatusNotFound {
		return DraftRef{}, fmt.Errorf("updating draft %s: %w", id, ErrDraftNotFound)
	}
	if err != nil {
		return DraftRef{}, fmt.Errorf("updating draft %s: %w", id, err)
	}
	ref := DraftRef{ID: out.Id}
	if out.Message != nil {
		ref.MessageID, ref.ThreadID = out.Message.Id, out.Message.ThreadId
	}
	return ref, nil
}
