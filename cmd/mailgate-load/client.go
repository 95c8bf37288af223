package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/loadtext"
)

// client is one agent: its own HTTP connection pool and MCP session, as a
// separate agent process would have.
type client struct {
	w        *workload
	id       int
	server   int    // index of the server it talks to
	endpoint string // that server's URL
	rng      *rand.Rand
	text     loadtext.Text // the messages and searches, drawn from rng
	tr       *http.Transport
	cs       *mcp.ClientSession
	name     string
	stats    *stats
	seq      int
	next     time.Time // with -rate: when the next call is due
	failing  int       // calls failed in a row, for backOff
}

func (c *client) setup(ctx context.Context) error {
	c.tr = http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: bearer{token: c.w.token, base: c.tr}}
	// MaxRetries -1: a dropped stream is an error to count, not to hide.
	tr := &mcp.StreamableClientTransport{Endpoint: c.endpoint, HTTPClient: hc, MaxRetries: -1}
	cl := mcp.NewClient(&mcp.Implementation{Name: "mailgate-load", Version: "0"}, nil)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	cs, err := cl.Connect(cctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: c.w.cfg.protocol})
	if err != nil {
		return fmt.Errorf("client %d: connecting to %s: %w", c.id, c.endpoint, err)
	}
	c.cs = cs
	if _, err := c.call(ctx, "ensure_project", map[string]any{"human_key": c.w.cfg.project}); err != nil {
		return fmt.Errorf("client %d: %w", c.id, err)
	}
	// No name requested: the server hands out a free one, which is what a
	// fresh agent gets and avoids guessing valid adjective+noun pairs.
	text, err := c.call(ctx, "register_agent", map[string]any{"project_key": c.w.cfg.project, "program": "mailgate-load",
		"model": "none", "task_description": fmt.Sprintf("load client %d", c.id)})
	if err != nil {
		return fmt.Errorf("client %d: %w", c.id, err)
	}
	var profile struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(text), &profile); err != nil || profile.Name == "" {
		return fmt.Errorf("client %d: register_agent answered no name: %.200s", c.id, text)
	}
	c.name = profile.Name
	return nil
}

func (c *client) close() {
	if c.cs != nil {
		c.cs.Close()
		c.cs = nil
	}
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
}

// loop runs the mix until the deadline. A call started before the
// deadline is allowed to finish and counts.
func (c *client) loop(ctx context.Context, start, deadline time.Time) {
	if c.w.cfg.rate > 0 {
		// Stagger the clients evenly over one interval.
		c.next = start.Add(c.interval() * time.Duration(c.id) / time.Duration(c.w.cfg.clients))
	}
	for ctx.Err() == nil && time.Now().Before(deadline) {
		switch pick(c.w.cfg.mix, c.rng) {
		case opSend:
			c.send(ctx)
		case opFetch:
			c.fetch(ctx)
		case opSearch:
			c.search(ctx)
		case opReserve:
			c.reserve(ctx)
		}
	}
}

// interval is the time between one client's calls under -rate.
func (c *client) interval() time.Duration {
	return time.Duration(float64(time.Second) * float64(c.w.cfg.clients) / c.w.cfg.rate)
}

// pace waits for the client's next slot under -rate and returns the time
// the call was due. Latency is measured from then, not from when the call
// went out: a server that falls behind delays the following calls too, and
// that wait is part of what an agent sees (no coordinated omission).
func (c *client) pace(ctx context.Context) time.Time {
	if c.w.cfg.rate <= 0 {
		return time.Now()
	}
	due := c.next
	c.next = c.next.Add(c.interval())
	if d := time.Until(due); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	return due
}

// timed makes one measured call. check, when not nil, validates the answer;
// a failed check counts as an error like a failed call.
func (c *client) timed(ctx context.Context, tool string, args map[string]any, check func(string) error) (string, bool) {
	due := c.pace(ctx)
	text, err := c.call(ctx, tool, args)
	lat := time.Since(due)
	if ctx.Err() != nil {
		return "", false // interrupted: neither a sample nor an error
	}
	c.w.calls.Add(1)
	if err == nil && check != nil {
		if cerr := check(text); cerr != nil {
			err = &callError{kind: "bad answer", err: cerr}
		}
	}
	if err != nil {
		c.w.failures.Add(1)
		c.stats.fail(tool, err)
		c.backOff(ctx)
		return "", false
	}
	c.failing = 0
	c.stats.record(tool, lat)
	return text, true
}

// backOff waits after a failed call, 50 ms doubling to 1 s while the calls
// keep failing: a server that is gone answers at once, and a client that
// kept calling would spin, counting hundreds of thousands of errors.
func (c *client) backOff(ctx context.Context) {
	d := min(50*time.Millisecond<<min(c.failing, 5), time.Second)
	c.failing++
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// callError is a failed call, with the kind the report groups it under.
type callError struct {
	kind string
	err  error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// call calls a tool and returns its text. A transport failure, a tool
// error (isError) and a timeout are told apart for the report.
func (c *client) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		kind := "transport"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			kind = "timeout"
		case strings.Contains(err.Error(), "rate limited"), strings.Contains(err.Error(), "Too Many Requests"):
			kind = "rate limited (429)"
		}
		return "", &callError{kind: kind, err: fmt.Errorf("%s: %w", tool, err)}
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", &callError{kind: "tool error", err: fmt.Errorf("%s: %s", tool, b.String())}
	}
	return b.String(), nil
}

// bearer adds the server's token to every request, as an agent configured
// with AGENT_MAIL_BEARER_TOKEN does.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}
