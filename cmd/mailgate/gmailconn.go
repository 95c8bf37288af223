package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mcpserver"
)

// gmailConn is the email tools' mailbox for a server started before
// `mailgate auth` has run. A server that refused to start without a token
// showed Claude Desktop only "disconnected", and took the agent-mail tools
// down with it; so serve starts, and this connects to Gmail on the first
// call that finds the OAuth client and the token on disk: no restart is
// needed after `mailgate auth`. Until then every email tool answers
// notConnectedError, which says what to run and where the files go.
type gmailConn struct {
	opts gmail.Options
	home string

	mu     sync.Mutex
	client *gmail.Client // set once connected, then never changes
	tried  bool          // a first attempt was made (and failed, if client is nil)
}

// newGmailConn connects at once when it can (the usual case: a configured
// home), and otherwise defers to the first call.
func newGmailConn(ctx context.Context, opts gmail.Options, home string) *gmailConn {
	g := &gmailConn{opts: opts, home: home}
	g.get(ctx) // the error is every email tool's answer until it goes away
	return g
}

// notConnectedError is what an email tool answers before Gmail is
// connected. Its text is the contract with the user: what is missing,
// what to run, where the file goes, and that no restart is needed.
type notConnectedError struct {
	home, credentials, token string
	cause                    error // why the files did not give a client
}

func (e *notConnectedError) Error() string {
	const tail = " No restart is needed: the next call uses the new token. Agent-mail tools, if served, work meanwhile."
	if _, err := os.Stat(e.credentials); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("Gmail is not connected yet: run `mailgate auth` in a terminal. It needs the OAuth client file %s first "+
			"(a \"Desktop app\" client from Google Cloud Console; `mailgate auth` prints the steps), then signs in in the browser "+
			"and saves the token to %s (home %s).%s", e.credentials, e.token, e.home, tail)
	}
	if _, err := os.Stat(e.token); errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("Gmail is not connected yet: run `mailgate auth` in a terminal to sign in in the browser; "+
			"it saves the token to %s, which this server looks for (home %s).%s", e.token, e.home, tail)
	}
	return fmt.Sprintf("Gmail is not connected: %v (home %s; token %s). Run `mailgate auth` in a terminal.%s", e.cause, e.home, e.token, tail)
}

func (e *notConnectedError) Unwrap() error { return e.cause }

// get returns the client, connecting first if need be.
func (g *gmailConn) get(ctx context.Context) (*gmail.Client, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.client != nil {
		return g.client, nil
	}
	c, err := gmail.New(ctx, g.opts)
	defer func() { g.tried = true }()
	if err != nil {
		return nil, &notConnectedError{home: g.home, credentials: g.opts.CredentialsFile, token: g.opts.TokenFile, cause: err}
	}
	if g.opts.Logger != nil && g.tried {
		g.opts.Logger.Info("Gmail connected: the email tools use the new token", "token", g.opts.TokenFile)
	}
	g.client = c
	return c, nil
}

// Client returns the client if connected, else nil.
func (g *gmailConn) Client() *gmail.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.client
}

// Connected is EmailDeps.Connected.
func (g *gmailConn) Connected(ctx context.Context) error {
	_, err := g.get(ctx)
	return err
}

// Every Mailbox method connects first (with): until `mailgate auth` has run,
// each answers the connection error.
var _ mcpserver.Mailbox = (*gmailConn)(nil)

func (g *gmailConn) Search(ctx context.Context, query string, max int) ([]gmail.Summary, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.Summary, error) { return c.Search(ctx, query, max) })
}

func (g *gmailConn) Message(ctx context.Context, id string) (*gmail.Message, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Message, error) { return c.Message(ctx, id) })
}

func (g *gmailConn) Thread(ctx context.Context, id string) ([]*gmail.Message, error) {
	return with(ctx, g, func(c *gmail.Client) ([]*gmail.Message, error) { return c.Thread(ctx, id) })
}

func (g *gmailConn) ReplyParent(ctx context.Context, threadID, messageID string) (*gmail.ReplyParent, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.ReplyParent, error) { return c.ReplyParent(ctx, threadID, messageID) })
}

func (g *gmailConn) CreateDraft(ctx context.Context, raw []byte, threadID string) (string, error) {
	return with(ctx, g, func(c *gmail.Client) (string, error) { return c.CreateDraft(ctx, raw, threadID) })
}

func (g *gmailConn) Send(ctx context.Context, raw []byte, threadID string) (*gmail.Sent, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Sent, error) { return c.Send(ctx, raw, threadID) })
}

func (g *gmailConn) HasSentTo(ctx context.Context, addr string) (bool, error) {
	return with(ctx, g, func(c *gmail.Client) (bool, error) { return c.HasSentTo(ctx, addr) })
}

func (g *gmailConn) FindRFC822(ctx context.Context, messageID string) (gmail.MessageRef, bool, error) {
	c, err := g.get(ctx)
	if err != nil {
		return gmail.MessageRef{}, false, err
	}
	return c.FindRFC822(ctx, messageID)
}

// with runs call on the connected client, or answers the connection error.
func with[T any](ctx context.Context, g *gmailConn, call func(*gmail.Client) (T, error)) (T, error) {
	c, err := g.get(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return call(c)
}

func (g *gmailConn) SearchPage(ctx context.Context, query string, limit int, pageToken string) (*gmail.Page, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Page, error) { return c.SearchPage(ctx, query, limit, pageToken) })
}

func (g *gmailConn) GetAttachment(ctx context.Context, messageID, attachmentID string) ([]byte, error) {
	return with(ctx, g, func(c *gmail.Client) ([]byte, error) { return c.GetAttachment(ctx, messageID, attachmentID) })
}

func (g *gmailConn) ListDrafts(ctx context.Context, query string, limit int, pageToken string) (*gmail.DraftPage, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.DraftPage, error) { return c.ListDrafts(ctx, query, limit, pageToken) })
}

func (g *gmailConn) GetDraft(ctx context.Context, id string) (*gmail.Draft, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Draft, error) { return c.GetDraft(ctx, id) })
}

func (g *gmailConn) UpdateDraft(ctx context.Context, id string, raw []byte, threadID string) (gmail.DraftRef, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.DraftRef, error) { return c.UpdateDraft(ctx, id, raw, threadID) })
}

func (g *gmailConn) ListLabels(ctx context.Context) ([]gmail.Label, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.Label, error) { return c.ListLabels(ctx) })
}

func (g *gmailConn) ModifyMessages(ctx context.Context, ids []string, ch gmail.LabelChange) (int, error) {
	return with(ctx, g, func(c *gmail.Client) (int, error) { return c.ModifyMessages(ctx, ids, ch) })
}

func (g *gmailConn) ModifyThread(ctx context.Context, id string, ch gmail.LabelChange) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.ModifyThread(ctx, id, ch) })
}

func (g *gmailConn) UntrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.MessageLabels, error) { return c.UntrashMessage(ctx, id) })
}

func (g *gmailConn) UntrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.UntrashThread(ctx, id) })
}

func (g *gmailConn) DraftRaw(ctx context.Context, id string) ([]byte, gmail.DraftRef, error) {
	c, err := g.get(ctx)
	if err != nil {
		return nil, gmail.DraftRef{}, err
	}
	return c.DraftRaw(ctx, id)
}

func (g *gmailConn) SendDraft(ctx context.Context, draftID string, raw []byte, threadID string) (*gmail.Sent, error) {
	return with(ctx, g, func(c *gmail.Client) (*gmail.Sent, error) { return c.SendDraft(ctx, draftID, raw, threadID) })
}

func (g *gmailConn) TrashMessage(ctx context.Context, id string) (gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.MessageLabels, error) { return c.TrashMessage(ctx, id) })
}

func (g *gmailConn) TrashThread(ctx context.Context, id string) ([]gmail.MessageLabels, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.MessageLabels, error) { return c.TrashThread(ctx, id) })
}

func (g *gmailConn) OwnAddresses(ctx context.Context) ([]string, error) {
	return with(ctx, g, func(c *gmail.Client) ([]string, error) { return c.OwnAddresses(ctx) })
}
