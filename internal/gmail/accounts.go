package gmail

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/mailgate/mailgate/internal/account"
)

// Accounts is the Gmail connections of a home's accounts (issue 27 item
// 2), one Connector each, keyed by account name: the default account's
// token is Options.TokenFile (GMAIL_TOKEN_FILE), another's is beside it
// (account.TokenFile), saved by `mailgate auth --account NAME`. An account
// is looked for on disk when first named, so one added while a server runs
// works without a restart, like the default account's first token.
type Accounts struct {
	opts Options
	home string

	mu    sync.Mutex
	conns map[string]*Connector
}

// NewAccounts connects the default account at once when it can (as
// NewConnector), and every other account when first named.
func NewAccounts(ctx context.Context, opts Options, home string) *Accounts {
	a := &Accounts{opts: opts, home: home, conns: map[string]*Connector{}}
	a.conns[account.Default] = NewConnector(ctx, opts, home)
	return a
}

// Names lists the accounts configured, the default first (account.List).
func (a *Accounts) Names() []string {
	names, _ := account.List(a.opts.TokenFile)
	return names
}

// Connector is the default account's connection.
func (a *Accounts) Connector() *Connector {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conns[account.Default]
}

// Get returns account name's client ("" is the default), connecting first
// if need be: an invalid name answers *account.NameError, a name without a
// token *account.UnknownError, an account whose files do not give a client
// yet *NotConnectedError.
func (a *Accounts) Get(ctx context.Context, name string) (*Client, error) {
	name = account.Resolve(name)
	if err := account.ValidName(name); err != nil {
		return nil, err
	}
	a.mu.Lock()
	c := a.conns[name]
	if c == nil {
		tok := account.TokenFile(a.opts.TokenFile, name)
		if _, err := os.Stat(tok); errors.Is(err, fs.ErrNotExist) {
			a.mu.Unlock()
			return nil, &account.UnknownError{Name: name, Configured: a.Names()}
		}
		o := a.opts
		o.TokenFile = tok
		c = &Connector{opts: o, home: a.home, account: name}
		a.conns[name] = c
	}
	a.mu.Unlock()
	return c.Get(ctx)
}
