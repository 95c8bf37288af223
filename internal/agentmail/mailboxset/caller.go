package mailboxset

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"sync"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/gitrepo"
)

// Caller is the mailbox set as one agent process sees it: who the caller is
// (its tmux window, else AgentName / AGENT_NAME), whom it may address (the
// session's other windows, else the project's registered agents, minus
// .agentmailignore) and the four operations. The MCP tools
// (MAILGATE_TOOLS=mailbox) and `mailgate mailbox` both call it, so a script
// gets what an agent gets.
type Caller struct {
	svc  *agentmail.Service
	st   Store
	o    CallerOptions
	tmux Windows

	// The default project is the git top level, which takes a git process
	// to find: found on the first call, not before the server answers.
	project sync.Once
	key     string
	box     *Set
}

// CallerOptions configure a Caller. The zero value is usable.
type CallerOptions struct {
	// ProjectKey is the project's absolute path. Default: DefaultProjectKey().
	ProjectKey string
	// DefaultProjectKey finds the project on first use when ProjectKey is
	// empty. Default: gitrepo.ProjectKey of the working directory, else "/".
	DefaultProjectKey func() string
	// AgentName is the identity outside tmux. Default $AGENT_NAME.
	AgentName string
	// Getenv reads AGENT_NAME. Default os.Getenv.
	Getenv func(string) string
}

// Windows is what the set asks tmux: whether the process runs inside it,
// the caller's window and its session's windows. tmux.Client answers
// (running tmux); the set does not import it, so tmux's tests may use the
// store's test helpers.
type Windows interface {
	Inside() bool
	Current(ctx context.Context) (string, error)
	Windows(ctx context.Context) ([]string, error)
}

// NewCaller returns the caller's view of the mailbox set over svc and st
// (the port on the service's database), asking win about tmux.
func NewCaller(svc *agentmail.Service, st Store, win Windows, o CallerOptions) *Caller {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.DefaultProjectKey == nil {
		o.DefaultProjectKey = func() string {
			if key, err := gitrepo.ProjectKey(context.Background(), ""); err == nil {
				return key
			}
			return "/"
		}
	}
	return &Caller{svc: svc, st: st, o: o, tmux: win}
}

// Mailbox is the project's mailbox in the core.
func (c *Caller) Mailbox() *Set {
	c.project.Do(func() {
		c.key = c.o.ProjectKey
		if c.key == "" {
			c.key = c.o.DefaultProjectKey()
		}
		c.box = New(c.svc, c.st, c.key)
	})
	return c.box
}

// ProjectKey is the project the caller acts in.
func (c *Caller) ProjectKey() string {
	c.Mailbox()
	return c.key
}

// ErrorText is what a refusal or failure of the operations says (as the
// tools' error answers do).
func (c *Caller) ErrorText(op string, err error) string {
	return agentmail.FailureText(context.Background(), c.svc.Logger(), op, err)
}

// Recipient is one list-recipients entry.
type Recipient struct {
	Name      string `json:"name"`
	IsCurrent bool   `json:"is_current"`
}

// ErrNoIdentity is the refusal outside tmux without AGENT_NAME.
var ErrNoIdentity = errors.New("no mailbox identity")

// refuse is a refusal worded by the set (identity, tmux, recipients): an
// agentmail.Error, so every adapter words it as the core's refusals.
func refuse(format string, args ...any) error {
	return agentmail.NewError("INVALID_ARGUMENT", agentmail.ErrInvalidArgument, format, args...)
}

// Identity is the caller's mailbox name (ErrNoIdentity outside tmux
// without AGENT_NAME).
func (c *Caller) Identity(ctx context.Context) (string, error) {
	name, _, err := c.identity(ctx)
	return name, err
}

// identity is the caller's mailbox name: its tmux window inside tmux, else
// AgentName / AGENT_NAME.
func (c *Caller) identity(ctx context.Context) (name string, inTmux bool, err error) {
	if c.tmux.Inside() {
		w, err := c.tmux.Current(ctx)
		if err != nil {
			return "", true, refuse("failed to get current window: %v", err)
		}
		return w, true, nil
	}
	name = strings.TrimSpace(c.o.AgentName)
	if name == "" {
		name = strings.TrimSpace(c.o.Getenv("AGENT_NAME"))
	}
	if name == "" {
		return "", false, agentmail.NewError("INVALID_ARGUMENT", ErrNoIdentity, "no agent identity: run inside tmux (the window name is the identity) or set AGENT_NAME")
	}
	return name, false, nil
}

// ignored reads .agentmailignore at the project root: one name a line;
// blank lines and lines starting with # are skipped. It is opened through
// an os.Root of the project folder, so a .agentmailignore that is a
// symbolic link out of the project is not read.
func (c *Caller) ignored() map[string]bool {
	out := map[string]bool{}
	root, err := os.OpenRoot(c.ProjectKey())
	if err != nil {
		return out
	}
	defer root.Close()
	f, err := root.Open(".agentmailignore")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out[l] = true
		}
	}
	return out
}

// candidates are the names the caller may address (self included): the
// session's windows in tmux, else the project's registered agents that can
// read mailbox mail. unreadable are the project's agents that never can
// (channels agents), for the refusal's words.
func (c *Caller) candidates(ctx context.Context, inTmux bool) (names, unreadable []string, err error) {
	if inTmux {
		ws, err := c.tmux.Windows(ctx)
		if err != nil {
			return nil, nil, refuse("failed to list windows: %v", err)
		}
		return ws, nil, nil
	}
	return c.Mailbox().AgentNames(ctx)
}

func sameName(a, b string, inTmux bool) bool {
	if inTmux {
		return a == b // window names are case-sensitive
	}
	return strings.EqualFold(a, b) // agent names are not
}

// Send sends message to recipient and returns the message id.
func (c *Caller) Send(ctx context.Context, to, message string) (int64, error) {
	if err := CheckMessage(message); err != nil {
		return 0, err
	}
	me, inTmux, err := c.identity(ctx)
	if err != nil {
		return 0, err
	}
	names, unreadable, err := c.candidates(ctx, inTmux)
	if err != nil {
		return 0, err
	}
	recipient := ""
	for _, n := range names {
		if sameName(n, to, inTmux) {
			recipient = n
			break
		}
	}
	if recipient == "" {
		for _, n := range unreadable {
			if sameName(n, to, inTmux) {
				// Delivering would answer "sent" for mail nobody can read.
				return 0, refuse("recipient not found: %s is an agent of the channels tool set, which reads channels and has no mailbox, "+
					"so it could never receive this message", n)
			}
		}
	}
	if recipient == "" || sameName(recipient, me, inTmux) || c.ignored()[recipient] {
		return 0, refuse("recipient not found")
	}
	return c.Mailbox().Send(ctx, me, recipient, message)
}

// Receive pops the caller's oldest unread message (ok false when none).
func (c *Caller) Receive(ctx context.Context) (Message, bool, error) {
	me, _, err := c.identity(ctx)
	if err != nil {
		return Message{}, false, err
	}
	return c.Mailbox().Receive(ctx, me)
}

// SetStatus sets the caller's availability.
func (c *Caller) SetStatus(ctx context.Context, status string) error {
	switch status {
	case Ready, Work, Offline:
	default:
		return InvalidStatus(status) // before identity: the value is wrong wherever we run
	}
	me, _, err := c.identity(ctx)
	if err != nil {
		return err
	}
	return c.Mailbox().SetStatus(ctx, me, status)
}

// Recipients lists the caller's recipients, itself marked IsCurrent.
func (c *Caller) Recipients(ctx context.Context) ([]Recipient, error) {
	me, inTmux, err := c.identity(ctx)
	if err != nil {
		return nil, err
	}
	names, _, err := c.candidates(ctx, inTmux)
	if err != nil {
		return nil, err
	}
	ign := c.ignored()
	out := []Recipient{}
	sawMe := false
	for _, n := range names {
		switch {
		case sameName(n, me, inTmux):
			sawMe = true
			out = append(out, Recipient{Name: n, IsCurrent: true}) // always shown
		case !ign[n]:
			out = append(out, Recipient{Name: n})
		}
	}
	if !sawMe { // outside tmux before the first send: the caller is not registered yet
		out = append([]Recipient{{Name: me, IsCurrent: true}}, out...)
	}
	return out, nil
}
