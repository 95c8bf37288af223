package gmail

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	gmailapi "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

// maxRawBytes is Gmail's size cap for messages.send and drafts.create.
const maxRawBytes = 36_700_160

// CreateDraft stores raw (an RFC 5322 message, e.g. from mailmsg.Build) as
// a draft, in threadID's thread if threadID is not "". It is retried like a
// read, network errors included: the worst case is a duplicate draft, which
// the user sees and deletes, and nothing is sent.
func (c *Client) CreateDraft(ctx context.Context, raw []byte, threadID string) (string, error) {
	if len(raw) > maxRawBytes {
		return "", fmt.Errorf("creating draft: message is %d bytes, over Gmail's %d", len(raw), maxRawBytes)
	}
	d := &gmailapi.Draft{Message: &gmailapi.Message{
		Raw:      base64.URLEncoding.EncodeToString(raw),
		ThreadId: threadID,
	}}
	attempts := 0
	draft, err := retry(ctx, c, "drafts.create", ScopeCompose, true, func(ctx context.Context) (*gmailapi.Draft, error) {
		if attempts++; attempts > 1 {
			c.log.Info("retrying drafts.create; if an earlier attempt reached Gmail a duplicate draft may exist",
				"attempt", attempts, "thread", threadID)
		}
		return c.svc.Users.Drafts.Create(user, d).Context(ctx).Do()
	})
	if err != nil {
		return "", fmt.Errorf("creating draft: %w", err)
	}
	return draft.Id, nil
}

// Sent identifies a message Gmail accepted for sending.
type Sent struct{ ID, ThreadID string }

// Send calls messages.send exactly once. It never retries, whatever the
// failure: a resend after a 5xx or a dropped connection may deliver the
// mail twice, and the approval it was sent under is for one mail.
//
// On failure it returns a *SendError whose MayHaveReached is false only
// when Google provably did not take the message:
//   - Gmail answered with a 4xx (a 429 or 403 rate-limit rejection, a 400
//     for a bad header, a 401 ...): the server rejected the request;
//   - the request was never handed to a connection (dial/TLS failure,
//     token refresh failure, context already done): no byte was sent.
//
// A 5xx, a timeout or a reset after the request went out, or an unreadable
// success response give MayHaveReached=true: reconcile (search Sent)
// before any retry. A 401 also drops the cached access token so that the
// caller's next call refreshes it.
func (c *Client) Send(ctx context.Context, raw []byte, threadID string) (*Sent, error) {
	if len(raw) > maxRawBytes {
		return nil, &SendError{Err: fmt.Errorf("message is %d bytes, over Gmail's %d", len(raw), maxRawBytes)}
	}
	msg := &gmailapi.Message{Raw: base64.URLEncoding.EncodeToString(raw), ThreadId: threadID}
	return c.sendOnce(ctx, "messages.send", func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Send(user, msg).Context(ctx).Do()
	})
}

// SendDraft sends draft draftID with raw as its content (drafts.send with
// the draft's message, in threadID's thread if threadID is not ""), exactly
// once, with Send's guarantees and *SendError. Gmail replaces the draft's
// content with raw and sends that, so what goes out is raw, the bytes the
// caller approved, even if the draft was edited since they were read. Gmail
// deletes the draft when it sends it. A draft Gmail does not know (404)
// fails with ErrDraftNotFound inside the SendError (refused, not sent).
func (c *Client) SendDraft(ctx context.Context, draftID string, raw []byte, threadID string) (*Sent, error) {
	switch {
	case draftID == "":
		return nil, &SendError{Err: ErrDraftNotFound}
	case len(raw) == 0:
		return nil, &SendError{Err: errors.New("sending draft: no message content given")}
	case len(raw) > maxRawBytes:
		return nil, &SendError{Err: fmt.Errorf("message is %d bytes, over Gmail's %d", len(raw), maxRawBytes)}
	}
	d := &gmailapi.Draft{Id: draftID, Message: &gmailapi.Message{Raw: base64.URLEncoding.EncodeToString(raw), ThreadId: threadID}}
	sent, err := c.sendOnce(ctx, "drafts.send", func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Drafts.Send(user, d).Context(ctx).Do()
	})
	var se *SendError
	if errors.As(err, &se) && se.Refused() && StatusCode(se.Err) == http.StatusNotFound {
		se.Err = fmt.Errorf("%w (%v)", ErrDraftNotFound, se.Err)
	}
	return sent, err
}

// sendOnce makes one send call (messages.send or drafts.send) and says, on
// failure, whether Google may have received the message.
func (c *Client) sendOnce(ctx context.Context, op string, send func(context.Context) (*gmailapi.Message, error)) (*Sent, error) {
	m, err := callOnce(ctx, c, op, ScopeCompose, send)
	if err != nil {
		return nil, err
	}
	return &Sent{ID: m.Id, ThreadID: m.ThreadId}, nil
}

// callOnce makes one call that must not be repeated (a send, a filter
// created, a label deleted) and says, on failure, whether Google may have
// received it (*SendError, which the gate reads: NeverReached, Refused).
// scope is what a 403 insufficientPermissions names.
func callOnce[T any](ctx context.Context, c *Client, op, scope string, call func(context.Context) (T, error)) (T, error) {
	// gotConn: a connection was obtained for this request, so bytes may
	// have been written. Conservative on purpose: a partial write counts
	// as "may have reached".
	var gotConn atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) }}
	started := time.Now()
	v, err := call(httptrace.WithClientTrace(ctx, trace))
	if err == nil {
		return v, nil
	}
	se := &SendError{Err: err, MayHaveReached: true}
	var gerr *googleapi.Error
	switch {
	case errors.As(err, &gerr):
		// The server answered. A 4xx is a refusal: Gmail did not accept
		// the request. A 5xx says nothing about whether it was.
		se.MayHaveReached = gerr.Code >= 500
		se.Answered = true
		switch {
		case gerr.Code == http.StatusUnauthorized:
			se.Err = c.after401(started, err)
		case isRateLimit(gerr):
			if wait := serverWait(gerr, time.Now()); wait > 0 {
				se.Err = &RateLimitedError{Until: time.Now().Add(wait), Err: err}
			}
		case gerr.Code == http.StatusForbidden && hasReason(gerr, "insufficientPermissions"):
			se.Err = &PermissionError{Scope: scope, Err: err}
		}
	case !gotConn.Load():
		// Failed before any connection: dial error, token refresh
		// failure (incl. *ReauthError), cancelled context.
		se.MayHaveReached = false
	}
	c.log.Warn(op+" failed", "may_have_reached", se.MayHaveReached, "err", err)
	var zero T
	return zero, se
}

// after401 handles a 401 on a call that must not be repeated: it refreshes
// the access token now (a refresh is not a resend) so that the caller's
// next call works, and so that a revoked grant is reported as such.
func (c *Client) after401(started time.Time, err error) error {
	if c.refresher == nil || !c.refresher.invalidate(started) {
		return &ReauthError{Cause: err}
	}
	if _, terr := c.refresher.Token(); terr != nil {
		var re *ReauthError
		if errors.As(terr, &re) {
			return re
		}
		return fmt.Errorf("%w (refreshing the access token also failed: %v)", err, terr)
	}
	return fmt.Errorf("%w (Gmail rejected the access token and did not take the message; the token has been refreshed)", err)
}
