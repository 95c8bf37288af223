package mirror

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Mailbox is the part of Gmail the mirror uses. RESTMailbox implements it;
// it belongs in internal/gmail next to Send (see the package report), and
// this interface is what lets it move there without touching the sink.
type Mailbox interface {
	// Insert stores raw with messages.insert (never sent), in threadID
	// when not "", with labelIDs.
	Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (Ref, error)
	// FindRFC822 looks a message up by its Message-ID header (trash and
	// spam included, so a copy the user deleted is not inserted again).
	FindRFC822(ctx context.Context, messageID string) (Ref, bool, error)
	// LabelID returns the id of the user label called name, "" if none.
	LabelID(ctx context.Context, name string) (string, error)
	// CreateLabel creates a user label; ErrLabelExists on 409.
	CreateLabel(ctx context.Context, name string) (string, error)
}

// Ref identifies a Gmail message.
type Ref struct{ ID, ThreadID string }

// ErrLabelExists: labels.create answered 409 (another process won).
var ErrLabelExists = errors.New("label already exists")

// APIError is a Gmail error answer.
type APIError struct {
	Status  int
	Reason  string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("gmail: %d %s: %s", e.Status, e.Reason, e.Message)
}

// RESTMailbox talks to the Gmail REST API with an already authorized
// client (an oauth2.Transport). It uses plain JSON rather than the
// generated client so that internal/gmail stays the only importer of
// google.golang.org/api.
type RESTMailbox struct {
	HTTP     *http.Client
	Endpoint string // base URL ending in "/", e.g. https://gmail.googleapis.com/
}

func (c *RESTMailbox) url(path string, q url.Values) string {
	u := strings.TrimSuffix(c.Endpoint, "/") + "/gmail/v1/users/me/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// do sends one request and decodes the JSON answer into out. Failures come
// back classified: 429, 403 rate limits, 5xx and transport errors as
// *TransientError (with Retry-After honoured), everything else as
// *APIError.
func (c *RESTMailbox) do(ctx context.Context, method, u string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &TransientError{Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return &TransientError{Err: err}
	}
	if resp.StatusCode/100 == 2 {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decoding Gmail answer: %w", err)
		}
		return nil
	}
	ae := &APIError{Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
	var eb struct {
		Error struct {
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &eb) == nil && eb.Error.Message != "" {
		ae.Message = eb.Error.Message
		if len(eb.Error.Errors) > 0 {
			ae.Reason = eb.Error.Errors[0].Reason
		}
	}
	rateLimited := ae.Status == http.StatusForbidden && (ae.Reason == "rateLimitExceeded" || ae.Reason == "userRateLimitExceeded")
	if ae.Status == http.StatusTooManyRequests || ae.Status >= 500 || rateLimited {
		return &TransientError{Wait: retryAfter(resp.Header.Get("Retry-After")), Err: ae}
	}
	return ae
}

func retryAfter(v string) time.Duration {
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

type apiMessage struct {
	ID       string   `json:"id,omitempty"`
	ThreadID string   `json:"threadId,omitempty"`
	LabelIDs []string `json:"labelIds,omitempty"`
	Raw      string   `json:"raw,omitempty"`
}

// Insert implements Mailbox. internalDateSource=dateHeader files the copy
// at the agent's send time, not at the (possibly much later) mirror time.
func (c *RESTMailbox) Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (Ref, error) {
	in := apiMessage{Raw: base64.URLEncoding.EncodeToString(raw), ThreadID: threadID, LabelIDs: labelIDs}
	var out apiMessage
	if err := c.do(ctx, http.MethodPost, c.url("messages", url.Values{"internalDateSource": {"dateHeader"}}), in, &out); err != nil {
		return Ref{}, fmt.Errorf("messages.insert: %w", err)
	}
	return Ref{ID: out.ID, ThreadID: out.ThreadID}, nil
}

// FindRFC822 implements Mailbox.
func (c *RESTMailbox) FindRFC822(ctx context.Context, messageID string) (Ref, bool, error) {
	q := url.Values{"q": {"rfc822msgid:" + strings.Trim(messageID, "<>")}, "includeSpamTrash": {"true"}, "maxResults": {"1"}}
	var out struct {
		Messages []apiMessage `json:"messages"`
	}
	if err := c.do(ctx, http.MethodGet, c.url("messages", q), nil, &out); err != nil {
		return Ref{}, false, fmt.Errorf("messages.list rfc822msgid: %w", err)
	}
	if len(out.Messages) == 0 {
		return Ref{}, false, nil
	}
	return Ref{ID: out.Messages[0].ID, ThreadID: out.Messages[0].ThreadID}, true, nil
}

// LabelID implements Mailbox. Gmail label names compare case-insensitively.
func (c *RESTMailbox) LabelID(ctx context.Context, name string) (string, error) {
	var out struct {
		Labels []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"labels"`
	}
	if err := c.do(ctx, http.MethodGet, c.url("labels", nil), nil, &out); err != nil {
		return "", fmt.Errorf("labels.list: %w", err)
	}
	for _, l := range out.Labels {
		if strings.EqualFold(l.Name, name) {
			return l.ID, nil
		}
	}
	return "", nil
}

// CreateLabel implements Mailbox.
func (c *RESTMailbox) CreateLabel(ctx context.Context, name string) (string, error) {
	in := map[string]string{"name": name, "labelListVisibility": "labelShow", "messageListVisibility": "show"}
	var out struct {
		ID string `json:"id"`
	}
	err := c.do(ctx, http.MethodPost, c.url("labels", nil), in, &out)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		return "", fmt.Errorf("labels.create %q: %w", name, ErrLabelExists)
	}
	if err != nil {
		return "", fmt.Errorf("labels.create %q: %w", name, err)
	}
	return out.ID, nil
}
