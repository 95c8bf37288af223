package gmail

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	gmailapi "google.golang.org/api/gmail/v1"
)

// ThreadSummary is one thread of a search by thread: how many messages it
// holds, who wrote in it, its first subject and its newest message. Text
// fields are decoded and sanitized.
type ThreadSummary struct {
	ID       string
	Messages int
	// Senders are the distinct From headers, oldest first.
	Senders []string
	Subject string  // the first message's
	Latest  Summary // the newest message
	Snippet string  // Gmail's snippet of the thread in this search
}

// ThreadPage is one page of SearchThreads.
type ThreadPage struct {
	Results            []ThreadSummary
	NextPageToken      string
	ResultSizeEstimate int64
}

// SearchThreads lists one page of up to limit threads holding a message
// that matches the Gmail query (threads.list, newest activity first), and
// reads each thread's headers (threads.get format=metadata), concurrently
// as SearchPage reads messages. A token is only valid with the query that
// gave it (ErrBadPageToken otherwise); a thread deleted between list and
// get is left out.
func (c *Client) SearchThreads(ctx context.Context, query string, limit int, pageToken string) (*ThreadPage, error) {
	limit = min(maxListResults, max(limit, 1))
	list, err := listPage(ctx, c, "threads.list", ScopeReadonly, "threads", pageToken, func(ctx context.Context) (*gmailapi.ListThreadsResponse, error) {
		return c.svc.Users.Threads.List(user).Q(query).MaxResults(int64(limit)).PageToken(pageToken).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	threads := atMost(list.Threads, limit)
	ids := mapped(threads, func(t *gmailapi.Thread) string { return t.Id })
	snippets := map[string]string{}
	for _, t := range threads {
		snippets[t.Id] = t.Snippet
	}
	res, err := fetchAll(ctx, c, "threads.get", "thread", ids, func(ctx context.Context, id string) (*gmailapi.Thread, error) {
		return c.svc.Users.Threads.Get(user, id).Format("metadata").MetadataHeaders(summaryHeaders...).Context(ctx).Do()
	}, summarizeThread)
	if err != nil {
		return nil, fmt.Errorf("searching threads: %w", err)
	}
	for i := range res {
		res[i].Snippet = snippet(snippets[res[i].ID])
	}
	return &ThreadPage{Results: res, NextPageToken: list.NextPageToken, ResultSizeEstimate: list.ResultSizeEstimate}, nil
}

func summarizeThread(t *gmailapi.Thread) ThreadSummary {
	msgs := oldestFirst(t.Messages)
	s := ThreadSummary{ID: t.Id, Messages: len(msgs)}
	for i, m := range msgs {
		sum := summarize(m)
		if i == 0 {
			s.Subject = sum.Subject
		}
		if sum.From != "" && !slices.ContainsFunc(s.Senders, func(x string) bool { return strings.EqualFold(x, sum.From) }) {
			s.Senders = append(s.Senders, sum.From)
		}
		s.Latest = sum
	}
	return s
}

// oldestFirst is a copy of a thread's messages, oldest first (Gmail already
// answers in that order; this keeps it explicit).
func oldestFirst(msgs []*gmailapi.Message) []*gmailapi.Message {
	msgs = slices.Clone(msgs)
	slices.SortStableFunc(msgs, func(a, b *gmailapi.Message) int { return cmp.Compare(a.InternalDate, b.InternalDate) })
	return msgs
}

// ThreadMessageIDs lists a thread's message ids, oldest first, without
// reading any message (threads.get format=minimal): what read_thread pages
// over before it reads the messages of one page in full.
// ErrThreadNotFound if the id is unknown.
func (c *Client) ThreadMessageIDs(ctx context.Context, id string) ([]string, error) {
	t, err := c.getThread(ctx, id, "minimal")
	if err != nil {
		return nil, err
	}
	return refIDs(oldestFirst(t.Messages)), nil
}

// Messages reads messages in full (format=full), concurrently and paced as
// SearchPage's gets, keeping ids' order; a message deleted meanwhile is
// left out.
func (c *Client) Messages(ctx context.Context, ids []string) ([]*Message, error) {
	res, err := fetchAll(ctx, c, "messages.get", "message", ids, func(ctx context.Context, id string) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Get(user, id).Format("full").Context(ctx).Do()
	}, convert)
	if err != nil {
		return nil, fmt.Errorf("reading messages: %w", err)
	}
	return res, nil
}
