package gmail

import (
	"context"
	"errors"
	"fmt"
	"html"
	"mime"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	gmailapi "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// maxListResults is Gmail's cap on messages.list maxResults.
const maxListResults = 500

// Summary is one search hit: enough to show a result line and to reply.
// Text fields are decoded and sanitized.
type Summary struct {
	ID, ThreadID, From, To, Cc, Subject, Date, Snippet, MessageID string
	// Bcc is there only on the sender's own copies (Sent, drafts), as
	// Gmail keeps it; recipients' copies never carry it.
	Bcc  string
	Time time.Time // internalDate (when Gmail received it)
}

// summaryHeaders are requested in metadata gets. Both spellings of
// Message-ID are asked for; the answer keeps the message's own case.
var summaryHeaders = []string{"From", "To", "Cc", "Bcc", "Subject", "Date", "Message-ID", "Message-Id"}

// ErrBadPageToken: Gmail refused a page token (it belongs to another
// query, or is not one of Gmail's at all).
var ErrBadPageToken = errors.New("invalid page token: it belongs to another search, or was not given by one")

// Page is one page of search results.
type Page struct {
	Results       []Summary
	NextPageToken string // "" on the last page
	// ResultSizeEstimate is Gmail's estimate of all matches, every page
	// together; Gmail documents it as rough.
	ResultSizeEstimate int64
}

// Search lists up to limit messages matching the Gmail query (newest first,
// limit clamped to 1..500) and fetches their headers: the first page of
// SearchPage.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]Summary, error) {
	p, err := c.SearchPage(ctx, query, limit, "")
	if err != nil {
		return nil, err
	}
	return p.Results, nil
}

// SearchPage lists one page of up to limit messages matching the Gmail
// query (newest first, limit clamped to 1..500), starting at pageToken (""
// for the first page), and fetches their headers. A token is only valid
// with the query that gave it (ErrBadPageToken otherwise). There is no
// batch API in the Go client, so the gets run concurrently (fetchAll).
// Results keep the list's order. A message deleted between list and get is
// left out.
func (c *Client) SearchPage(ctx context.Context, query string, limit int, pageToken string) (*Page, error) {
	limit = min(maxListResults, max(limit, 1))
	list, err := listPage(ctx, c, "messages.list", ScopeReadonly, "messages", pageToken, func(ctx context.Context) (*gmailapi.ListMessagesResponse, error) {
		return c.svc.Users.Messages.List(user).Q(query).MaxResults(int64(limit)).PageToken(pageToken).
			Fields("messages(id,threadId)", "nextPageToken", "resultSizeEstimate").Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	res, err := fetchAll(ctx, c, "messages.get", "message", refIDs(atMost(list.Messages, limit)), func(ctx context.Context, id string) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Get(user, id).Format("metadata").MetadataHeaders(summaryHeaders...).Context(ctx).Do()
	}, summarize)
	if err != nil {
		return nil, fmt.Errorf("searching messages: %w", err)
	}
	return &Page{Results: res, NextPageToken: list.NextPageToken, ResultSizeEstimate: list.ResultSizeEstimate}, nil
}

// listPage runs list, one page's call (op, under scope) of a listing of
// what from pageToken: a token Gmail refuses (400) is ErrBadPageToken.
func listPage[T any](ctx context.Context, c *Client, op, scope, what, pageToken string, list func(context.Context) (T, error)) (T, error) {
	v, err := retry(ctx, c, op, scope, true, list)
	if pageToken != "" && StatusCode(err) == http.StatusBadRequest {
		return v, fmt.Errorf("listing %s: %w (%v)", what, ErrBadPageToken, err)
	}
	if err != nil {
		return v, fmt.Errorf("listing %s: %w", what, err)
	}
	return v, nil
}

// fetchAll runs get (op: messages.get or drafts.get) for every id under the
// read policy and converts each answer with conv, at most FetchConcurrency at a time (Gmail answers
// 429 "Too many concurrent requests" beyond a small per-user cap) and each
// attempt paced by a limiter shared by all calls (the per-user quota is
// about 50 gets per second). Results keep the items' order; an item gone
// (404) since the list is left out; any other failure fails the whole call.
func fetchAll[A, T any](ctx context.Context, c *Client, op, noun string, ids []string, get func(context.Context, string) (A, error), conv func(A) T) ([]T, error) {
	out := make([]T, len(ids))
	found := make([]bool, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.opts.FetchConcurrency)
	for i, id := range ids {
		g.Go(func() error {
			v, err := retry(gctx, c, op, ScopeReadonly, true, func(ctx context.Context) (A, error) {
				// Pace every attempt, retries included.
				if err := c.limiter.Wait(ctx); err != nil {
					var zero A
					return zero, err
				}
				return get(ctx, id)
			})
			if isNotFound(err) {
				return nil // deleted since the list; skip it
			}
			if err != nil {
				return fmt.Errorf("fetching %s %s: %w", noun, id, err)
			}
			out[i], found[i] = conv(v), true
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	res := out[:0]
	for i, v := range out {
		if found[i] {
			res = append(res, v)
		}
	}
	return res, nil
}

func refIDs(refs []*gmailapi.Message) []string {
	return mapped(refs, func(r *gmailapi.Message) string { return r.Id })
}

// atMost is the first n items of a list call's page (all of them when
// fewer): Gmail's answer is not trusted to stop at the limit asked for.
func atMost[T any](items []T, n int) []T { return items[:min(len(items), n)] }

// mapped converts each item of in with f: the API's answers turned into
// this package's types.
func mapped[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// isNotFound reports a 404, or a 400 for a malformed id, from Gmail.
func isNotFound(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && (gerr.Code == 404 || gerr.Code == 400)
}

// callError is a call's error (nil for none) prefixed with what the call
// did (format, args): an unknown or malformed id (isNotFound) as notFound,
// the sentinel callers test with errors.Is; anything else as it is.
func callError(err, notFound error, format string, args ...any) error {
	switch {
	case err == nil:
		return nil
	case isNotFound(err):
		err = notFound
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func summarize(m *gmailapi.Message) Summary {
	h := headerMap(m.Payload)
	s := Summary{
		ID:        m.Id,
		ThreadID:  m.ThreadId,
		From:      displayHeader(h.get("From")),
		To:        displayHeader(h.get("To")),
		Cc:        displayHeader(h.get("Cc")),
		Bcc:       displayHeader(h.get("Bcc")),
		Subject:   displayHeader(h.get("Subject")),
		Date:      displayHeader(h.get("Date")),
		MessageID: strings.TrimSpace(h.get("Message-ID")),
		Snippet:   snippet(m.Snippet),
		Time:      messageTime(m, h.get("Date")),
	}
	return s
}

// headers holds a message's headers in order; lookups ignore case
// (Gmail returns "Message-Id" or "Message-ID" as the sender wrote it).
type headers []*gmailapi.MessagePartHeader

func headerMap(p *gmailapi.MessagePart) headers {
	if p == nil {
		return nil
	}
	return headers(p.Headers)
}

// get returns the first value of the named header, "" if absent.
func (h headers) get(name string) string {
	for _, x := range h {
		if x != nil && strings.EqualFold(x.Name, name) {
			return x.Value
		}
	}
	return ""
}

var wordDecoder = &mime.WordDecoder{}

// displayHeader decodes RFC 2047 words (if Gmail left any) and strips what
// must not reach an agent.
func displayHeader(v string) string {
	if d, err := wordDecoder.DecodeHeader(v); err == nil {
		v = d
	}
	return strings.TrimSpace(strings.ReplaceAll(mailmsg.Sanitize(v), "\n", " "))
}

// snippet undoes the HTML escaping Gmail applies to snippets ("&#39;").
func snippet(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(mailmsg.Sanitize(html.UnescapeString(s)), "\n", " "))
}

// messageTime is Gmail's internalDate, else the Date header.
func messageTime(m *gmailapi.Message, date string) time.Time {
	if m.InternalDate > 0 {
		return time.UnixMilli(m.InternalDate)
	}
	if t, err := mail.ParseDate(date); err == nil {
		return t
	}
	return time.Time{}
}
