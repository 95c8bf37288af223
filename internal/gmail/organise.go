package gmail

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gmailapi "google.golang.org/api/gmail/v1"
)

// Organising mail: labels, label changes on messages and threads, trash.
// Every call here is idempotent (adding a label twice, trashing a trashed
// message change nothing), so all are retried under the read policy,
// network failures included. They need gmail.modify (labels.list also
// works with gmail.readonly or gmail.labels).

// maxBatchModify is Gmail's limit on ids in one messages.batchModify call.
const maxBatchModify = 1000

// Label is one Gmail label. Type is "system" (INBOX, UNREAD, STARRED, …,
// whose id is its name) or "user" (id "Label_<n>").
type Label struct {
	ID, Name, Type string
}

// ListLabels lists every label, system labels first, as Gmail orders them.
func (c *Client) ListLabels(ctx context.Context) ([]Label, error) {
	list, err := retry(ctx, c, "labels.list", ScopeLabels, true, func(ctx context.Context) (*gmailapi.ListLabelsResponse, error) {
		return c.svc.Users.Labels.List(user).Context(ctx).Do()
	})
	if err != nil {
		return nil, fmt.Errorf("labels.list: %w", err)
	}
	return mapped(list.Labels, func(l *gmailapi.Label) Label { return Label{ID: l.Id, Name: l.Name, Type: l.Type} }), nil
}

// LabelID returns the id of the label called name ("" if none). Gmail label
// names compare case-insensitively.
func (c *Client) LabelID(ctx context.Context, name string) (string, error) {
	labels, err := c.ListLabels(ctx)
	if err != nil {
		return "", err
	}
	for _, l := range labels {
		if strings.EqualFold(l.Name, name) {
			return l.ID, nil
		}
	}
	return "", nil
}

// LabelChange is a set of label ids to add and to remove. Archive is
// Remove INBOX; mark read is Remove UNREAD; star is Add STARRED.
type LabelChange struct {
	Add, Remove []string
}

// ErrNoLabelChange: a LabelChange with nothing to add or remove.
var ErrNoLabelChange = errors.New("no label to add or remove")

// ModifyMessages applies ch to every message in ids with
// messages.batchModify, in chunks of 1000 (Gmail's limit), one after the
// other. done is the number of ids in the chunks Gmail accepted before any
// failure; a chunk that fails after its retries stops the rest. Ids of
// messages deleted meanwhile do not fail a chunk on the local server
// (Gmail's behaviour there is unconfirmed).
func (c *Client) ModifyMessages(ctx context.Context, ids []string, ch LabelChange) (done int, err error) {
	if len(ch.Add) == 0 && len(ch.Remove) == 0 {
		return 0, ErrNoLabelChange
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), maxBatchModify)]
		req := &gmailapi.BatchModifyMessagesRequest{Ids: chunk, AddLabelIds: ch.Add, RemoveLabelIds: ch.Remove}
		if _, err := retry(ctx, c, "messages.batchModify", ScopeModify, true, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, c.svc.Users.Messages.BatchModify(user, req).Context(ctx).Do()
		}); err != nil {
			return done, fmt.Errorf("messages.batchModify (%d of %d messages done): %w", done, done+len(ids), err)
		}
		done += len(chunk)
		ids = ids[len(chunk):]
	}
	return done, nil
}

// ModifyThread applies ch to every message of thread id. It returns the
// thread's messages with their new labels.
func (c *Client) ModifyThread(ctx context.Context, id string, ch LabelChange) ([]MessageLabels, error) {
	if len(ch.Add) == 0 && len(ch.Remove) == 0 {
		return nil, ErrNoLabelChange
	}
	req := &gmailapi.ModifyThreadRequest{AddLabelIds: ch.Add, RemoveLabelIds: ch.Remove}
	return c.threadCall(ctx, "threads.modify", id, func(ctx context.Context) (*gmailapi.Thread, error) {
		return c.svc.Users.Threads.Modify(user, id, req).Context(ctx).Do()
	})
}

// MessageLabels is a message's labels after a change.
type MessageLabels struct {
	ID, ThreadID string
	Labels       []string
}

// TrashMessage moves a message to the trash (Gmail deletes it for good
// after 30 days). ErrNotFound for an unknown or malformed id.
func (c *Client) TrashMessage(ctx context.Context, id string) (MessageLabels, error) {
	return c.messageCall(ctx, "messages.trash", id, func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Trash(user, id).Context(ctx).Do()
	})
}

// UntrashMessage takes a message out of the trash.
func (c *Client) UntrashMessage(ctx context.Context, id string) (MessageLabels, error) {
	return c.messageCall(ctx, "messages.untrash", id, func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Untrash(user, id).Context(ctx).Do()
	})
}

// TrashThread moves every message of a thread to the trash.
// ErrThreadNotFound for an unknown or malformed id.
func (c *Client) TrashThread(ctx context.Context, id string) ([]MessageLabels, error) {
	return c.threadCall(ctx, "threads.trash", id, func(ctx context.Context) (*gmailapi.Thread, error) {
		return c.svc.Users.Threads.Trash(user, id).Context(ctx).Do()
	})
}

// UntrashThread takes every message of a thread out of the trash.
func (c *Client) UntrashThread(ctx context.Context, id string) ([]MessageLabels, error) {
	return c.threadCall(ctx, "threads.untrash", id, func(ctx context.Context) (*gmailapi.Thread, error) {
		return c.svc.Users.Threads.Untrash(user, id).Context(ctx).Do()
	})
}

// messageCall runs a per-message organising call under the read policy.
func (c *Client) messageCall(ctx context.Context, op, id string, call func(context.Context) (*gmailapi.Message, error)) (MessageLabels, error) {
	if id == "" {
		return MessageLabels{}, fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	m, err := retry(ctx, c, op, ScopeModify, true, call)
	if err := callError(err, ErrNotFound, "%s %s", op, id); err != nil {
		return MessageLabels{}, err
	}
	return MessageLabels{ID: m.Id, ThreadID: m.ThreadId, Labels: m.LabelIds}, nil
}

// threadCall runs a per-thread organising call under the read policy.
// threads.modify answers 400 both for a malformed thread id and for a bad
// label, with the same reason: only the message tells them apart, so only
// 404 and "Invalid id value" map to ErrThreadNotFound.
func (c *Client) threadCall(ctx context.Context, op, id string, call func(context.Context) (*gmailapi.Thread, error)) ([]MessageLabels, error) {
	if id == "" {
		return nil, fmt.Errorf("%s: %w", op, ErrThreadNotFound)
	}
	t, err := retry(ctx, c, op, ScopeModify, true, call)
	if isNotFound(err) && (StatusCode(err) == 404 || strings.Contains(err.Error(), "Invalid id value")) {
		return nil, fmt.Errorf("%s %s: %w", op, id, ErrThreadNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, id, err)
	}
	return mapped(t.Messages, func(m *gmailapi.Message) MessageLabels {
		return MessageLabels{ID: m.Id, ThreadID: m.ThreadId, Labels: m.LabelIds}
	}), nil
}
