package gmail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Connector is the Gmail connection of a server started before `mailgate
// auth` has run. A server that refused to start without a token showed
// Claude Desktop only "disconnected", and took the agent-mail tools down
// with it; so the server starts, and the connector makes the client on the
// first call that finds the OAuth client and the token on disk: no restart
// is needed after `mailgate auth`. Until then Get answers a
// *NotConnectedError, which says what to run and where the files go.
type Connector struct {
	opts    Options
	home    string
	account string // "" for the default account (Accounts)

	mu     sync.Mutex
	client *Client // set once connected, then never changes
	tried  bool    // a first attempt was made (and failed, if client is nil)
}

// NewConnector connects at once when it can (the usual case: a configured
// home), and otherwise defers to the first Get. home is named in the
// not-connected answer.
func NewConnector(ctx context.Context, opts Options, home string) *Connector {
	g := &Connector{opts: opts, home: home}
	g.Get(ctx) // the error is every email tool's answer until it goes away
	return g
}

// NotConnectedError is what Get answers before Gmail is connected. Its text
// is the contract with the user: what is missing, what to run, where the
// file goes, and that no restart is needed.
type NotConnectedError struct {
	home, credentials, token string
	account                  string // "": the default account
	cause                    error  // why the files did not give a client
}

func (e *NotConnectedError) Error() string {
	const tail = " No restart is needed: the next call uses the new token. Agent-mail tools, if served, work meanwhile."
	if e.account != "" {
		return fmt.Sprintf("Gmail account %q is not connected: %v (home %s; token %s). Run `mailgate auth --account %s` in a terminal.%s",
			e.account, e.cause, e.home, e.token, e.account, tail)
	}
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

func (e *NotConnectedError) Unwrap() error { return e.cause }

// Get returns the client, connecting first if need be.
func (g *Connector) Get(ctx context.Context) (*Client, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.client != nil {
		return g.client, nil
	}
	c, err := New(ctx, g.opts)
	defer func() { g.tried = true }()
	if err != nil {
		return nil, &NotConnectedError{home: g.home, credentials: g.opts.CredentialsFile, token: g.opts.TokenFile, account: g.account, cause: err}
	}
	if g.opts.Logger != nil && g.tried {
		g.opts.Logger.Info("Gmail connected: the email tools use the new token", "token", g.opts.TokenFile)
	}
	g.client = c
	return c, nil
}

// Client returns the client if connected, else nil.
func (g *Connector) Client() *Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.client
}
