package gmail

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gmailapi "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// The calls of the agent-mail → Gmail mirror (internal/mirror): copies
// inserted into the mailbox (never sent), and the labels that file them.

// MessageRef identifies a Gmail message.
type MessageRef struct{ ID, ThreadID string }

// ErrLabelExists: labels.create answered 409 (another process made it).
var ErrLabelExists = errors.New("label already exists")

// Insert stores raw with messages.insert (never sent) in threadID when not
// "", with labelIDs. internalDateSource=dateHeader files the copy at the
// time in its Date header (the agent's send time), not at insert time.
//
// One attempt, like Send: when an answer is lost after Gmail stored the
// copy, a blind retry would file a second one. The mirror's outbox retries
// after looking the copy up (FindRFC822). Transient tells its errors apart.
func (c *Client) Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (MessageRef, error) {
	msg := &gmailapi.Message{Raw: base64.URLEncoding.EncodeToString(raw), ThreadId: threadID, LabelIds: labelIDs}
	m, err := c.svc.Users.Messages.Insert(user, msg).InternalDateSource("dateHeader").Context(ctx).Do()
	if err != nil {
		return MessageRef{}, fmt.Errorf("messages.insert: %w", c.single(err, ScopeInsert))
	}
	return MessageRef{ID: m.Id, ThreadID: m.ThreadId}, nil
}

// FindRFC822 looks a message up by its Message-ID header, trash and spam
// included (so a copy the user deleted is not inserted again). A read:
// retried under the read policy.
func (c *Client) FindRFC822(ctx context.Context, messageID string) (MessageRef, bool, error) {
	list, err := retry(ctx, c, "messages.list", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.ListMessagesResponse, error) {
		return c.svc.Users.Messages.List(user).Q("rfc822msgid:" + strings.Trim(messageID, "<>")).
			IncludeSpamTrash(true).MaxResults(1).Fields("messages(id,threadId)").Context(ctx).Do()
	})
	if err != nil {
		return MessageRef{}, false, fmt.Errorf("messages.list rfc822msgid: %w", err)
	}
	if len(list.Messages) == 0 {
		return MessageRef{}, false, nil
	}
	return MessageRef{ID: list.Messages[0].Id, ThreadID: list.Messages[0].ThreadId}, true, nil
}

// CreateLabel creates a user label shown in the label list and on messages.
// One attempt (a lost answer must not make two labels): a 409 comes back as
// ErrLabelExists, for the caller to list again.
func (c *Client) CreateLabel(ctx context.Context, name string) (string, error) {
	l, err := c.svc.Users.Labels.Create(user, &gmailapi.Label{Name: name, LabelListVisibility: "labelShow", MessageListVisibility: "show"}).
		Context(ctx).Do()
	if StatusCode(err) == http.StatusConflict {
		return "", fmt.Errorf("labels.create %q: %w", name, ErrLabelExists)
	}
	if err != nil {
		return "", fmt.Errorf("labels.create %q: %w", name, c.single(err, ScopeLabels))
	}
	return l.Id, nil
}

// single types the error of a call made once: a missing scope becomes a
// *PermissionError, a refused refresh token a *ReauthError; the rest is
// left for Transient to judge.
func (c *Client) single(err error, scope string) error {
	if verdict, _, typed := c.classify(err, false, scope); verdict == permanent {
		return typed
	}
	return err
}

// Transient reports whether err from Insert, FindRFC822, LabelID or
// CreateLabel should clear up on its own — Gmail's rate limits (429 and the
// 403 rate-limit reasons), its 5xx, a network failure — and how long Gmail
// asked to wait (0 if it did not say). Everything else (a refusal, a
// missing scope, a revoked grant, the caller's cancellation) is not.
func Transient(err error) (wait time.Duration, ok bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var reauth *ReauthError
	var perm *PermissionError
	if errors.As(err, &reauth) || errors.As(err, &perm) {
		return 0, false
	}
	var rl *RateLimitedError
	if errors.As(err, &rl) {
		return max(time.Until(rl.Until), 0), true
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		if isRateLimit(gerr) || gerr.Code >= 500 {
			return serverWait(gerr, time.Now()), true
		}
		return 0, false
	}
	return 0, true // no answer from Gmail: a network failure
}

// StatusCode is the HTTP status of the Gmail answer inside err, 0 if err
// holds none.
func StatusCode(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}
