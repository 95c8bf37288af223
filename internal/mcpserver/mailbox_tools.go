package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/tmux"
)

// The mailbox tool set (MAILGATE_TOOLS=mailbox): exactly the four tools of
// the tmux agent-mail CLI's stdio server — send, receive, status,
// list-recipients — with its answers and error texts, over
// mailboxset.Set. The agent is its tmux window (else AGENT_NAME); its
// recipients are the session's other windows minus .agentmailignore (else
// the project's registered agents). The tools are listed in the inventory
// (inventory.go).

type mbSendIn struct {
	Recipient string `json:"recipient" jsonschema:"the recipient's name (its tmux window name); see list-recipients"`
	Message   string `json:"message" jsonschema:"the message text (at most 65536 bytes)" maxLength:"65536"`
}

type mbEmptyIn struct{}

type mbStatusIn struct {
	Status string `json:"status" jsonschema:"ready, work or offline"`
}

// MailboxRecipient is one list-recipients entry.
type MailboxRecipient struct {
	Name      string `json:"name"`
	IsCurrent bool   `json:"is_current"`
}

type mbTools struct {
	svc  *agentmail.Service
	st   mailboxset.Store
	o    CompatOptions // ProjectKey stays empty when it defaults: see mailbox
	log  *slog.Logger
	tmux tmuxWindows

	// The default project is the git top level, which takes a git process
	// to find: found on the first call, not before the server answers.
	project sync.Once
	key     string
	box     *mailboxset.Set
}

func newMBTools(svc *agentmail.Service, st mailboxset.Store, co CompatOptions) *mbTools {
	o := co.withDefaultsButProject()
	return &mbTools{svc: svc, st: st, o: o, log: svc.Logger(), tmux: tmux.Client{Getenv: o.Getenv}}
}

// mailbox is the project's mailbox; projectKey its key.
func (t *mbTools) mailbox() *mailboxset.Set {
	t.project.Do(func() {
		t.key = t.o.ProjectKey
		if t.key == "" {
			t.key = defaultProjectKey()
		}
		t.box = mailboxset.New(t.svc, t.st, t.key)
	})
	return t.box
}

func (t *mbTools) projectKey() string {
	t.mailbox()
	return t.key
}

// MailboxOps are the mailbox set's four operations without MCP, for
// `mailgate mailbox`: the same identity, recipients, rules and texts as the
// tools, so a script gets what an agent gets.
type MailboxOps struct{ t *mbTools }

// NewMailboxOps returns the operations over svc with the options the
// mailbox tool set would use.
func NewMailboxOps(svc *agentmail.Service, st mailboxset.Store, co CompatOptions) *MailboxOps {
	t := newMBTools(svc, st, co)
	// A command asks once or twice and exits: attaching a control-mode
	// client (and making the session's hooks see a client come and go)
	// would cost more than the one tmux process per question it saves.
	t.tmux = tmux.Client{Getenv: t.o.Getenv, PerCall: true}
	return &MailboxOps{t: t}
}

// ProjectKey is the project the operations act in.
func (o *MailboxOps) ProjectKey() string { return o.t.projectKey() }

// Mailbox is the project's mailbox in the core.
func (o *MailboxOps) Mailbox() *mailboxset.Set { return o.t.mailbox() }

// Identity is the caller's mailbox name (ErrNoMailboxIdentity outside tmux
// without AGENT_NAME).
func (o *MailboxOps) Identity(ctx context.Context) (string, error) {
	name, _, err := o.t.identity(ctx)
	return name, err
}

// Send sends message to recipient and returns the message id.
func (o *MailboxOps) Send(ctx context.Context, recipient, message string) (int64, error) {
	return o.t.doSend(ctx, recipient, message)
}

// Receive pops the caller's oldest unread message (ok false when none).
func (o *MailboxOps) Receive(ctx context.Context) (mailboxset.Message, bool, error) {
	return o.t.doReceive(ctx)
}

// SetStatus sets the caller's availability.
func (o *MailboxOps) SetStatus(ctx context.Context, status string) error {
	return o.t.doStatus(ctx, status)
}

// Recipients lists the caller's recipients, itself marked IsCurrent.
func (o *MailboxOps) Recipients(ctx context.Context) ([]MailboxRecipient, error) {
	return o.t.doRecipients(ctx)
}

// ErrorText is what a refusal or failure of the operations says (as the
// tools' error answers do).
func (o *MailboxOps) ErrorText(op string, err error) string {
	return failureText(context.Background(), o.t.log, op, err)
}

// mbError is a refusal worded by this adapter (identity, tmux).
type mbError struct {
	msg  string
	kind error // a sentinel the refusal matches (errors.Is), or nil
}

func (e *mbError) Error() string { return e.msg }
func (e *mbError) Unwrap() error { return e.kind }

// ErrNoMailboxIdentity is the refusal outside tmux without AGENT_NAME.
var ErrNoMailboxIdentity = errors.New("no mailbox identity")

func refuse(format string, args ...any) error { return &mbError{msg: fmt.Sprintf(format, args...)} }

// identity is the caller's mailbox name: its tmux window inside tmux, else
// AgentName / AGENT_NAME.
func (t *mbTools) identity(ctx context.Context) (name string, inTmux bool, err error) {
	if t.tmux.Inside() {
		w, err := t.tmux.Current(ctx)
		if err != nil {
			return "", true, refuse("failed to get current window: %v", err)
		}
		return w, true, nil
	}
	name = strings.TrimSpace(t.o.AgentName)
	if name == "" {
		name = strings.TrimSpace(t.o.Getenv("AGENT_NAME"))
	}
	if name == "" {
		return "", false, &mbError{msg: "no agent identity: run inside tmux (the window name is the identity) or set AGENT_NAME", kind: ErrNoMailboxIdentity}
	}
	return name, false, nil
}

// ignored reads .agentmailignore at the project root: one name a line;
// blank lines and lines starting with # are skipped. It is opened through
// an os.Root of the project folder, so a .agentmailignore that is a
// symbolic link out of the project is not read.
func (t *mbTools) ignored() map[string]bool {
	out := map[string]bool{}
	root, err := os.OpenRoot(t.projectKey())
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
func (t *mbTools) candidates(ctx context.Context, inTmux bool) (names, unreadable []string, err error) {
	if inTmux {
		ws, err := t.tmux.Windows(ctx)
		if err != nil {
			return nil, nil, refuse("failed to list windows: %v", err)
		}
		return ws, nil, nil
	}
	return t.mailbox().AgentNames(ctx)
}

func sameName(a, b string, inTmux bool) bool {
	if inTmux {
		return a == b // window names are case-sensitive
	}
	return strings.EqualFold(a, b) // agent names are not
}

func (t *mbTools) send(ctx context.Context, in mbSendIn) (*mcp.CallToolResult, error) {
	id, err := t.doSend(ctx, in.Recipient, in.Message)
	if errors.Is(err, mailboxset.ErrTooLarge) {
		// FR-013: a JSON-RPC error, not a tool answer.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	return sentenceResult(fmt.Sprintf("Message #%d sent", id), map[string]any{"message_id": fmt.Sprint(id)}), nil
}

func (t *mbTools) doSend(ctx context.Context, to, message string) (int64, error) {
	in := mbSendIn{Recipient: to, Message: message}
	if err := mailboxset.CheckMessage(in.Message); err != nil {
		return 0, err
	}
	me, inTmux, err := t.identity(ctx)
	if err != nil {
		return 0, err
	}
	names, unreadable, err := t.candidates(ctx, inTmux)
	if err != nil {
		return 0, err
	}
	recipient := ""
	for _, n := range names {
		if sameName(n, in.Recipient, inTmux) {
			recipient = n
			break
		}
	}
	if recipient == "" {
		for _, n := range unreadable {
			if sameName(n, in.Recipient, inTmux) {
				// Delivering would answer "sent" for mail nobody can read.
				return 0, refuse("recipient not found: %s is an agent of the channels tool set, which reads channels and has no mailbox, "+
					"so it could never receive this message", n)
			}
		}
	}
	if recipient == "" || sameName(recipient, me, inTmux) || t.ignored()[recipient] {
		return 0, refuse("recipient not found")
	}
	return t.mailbox().Send(ctx, me, recipient, in.Message)
}

func (t *mbTools) doReceive(ctx context.Context) (mailboxset.Message, bool, error) {
	me, _, err := t.identity(ctx)
	if err != nil {
		return mailboxset.Message{}, false, err
	}
	return t.mailbox().Receive(ctx, me)
}

func (t *mbTools) receive(ctx context.Context, _ mbEmptyIn) (*mcp.CallToolResult, error) {
	msg, ok, err := t.doReceive(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return sentenceResult("No unread messages", map[string]any{"status": "No unread messages"}), nil
	}
	return jsonResult(msg)
}

func (t *mbTools) status(ctx context.Context, in mbStatusIn) (*mcp.CallToolResult, error) {
	if err := t.doStatus(ctx, in.Status); err != nil {
		return nil, err
	}
	return jsonResult(map[string]string{"status": "ok"})
}

func (t *mbTools) doStatus(ctx context.Context, status string) error {
	switch status {
	case mailboxset.Ready, mailboxset.Work, mailboxset.Offline:
	default:
		return mailboxset.InvalidStatus(status) // before identity: the value is wrong wherever we run
	}
	me, _, err := t.identity(ctx)
	if err != nil {
		return err
	}
	return t.mailbox().SetStatus(ctx, me, status)
}

func (t *mbTools) listRecipients(ctx context.Context, _ mbEmptyIn) (*mcp.CallToolResult, error) {
	rs, err := t.doRecipients(ctx)
	if err != nil {
		return nil, err
	}
	return jsonResult(struct {
		Recipients []MailboxRecipient `json:"recipients"`
	}{Recipients: rs})
}

func (t *mbTools) doRecipients(ctx context.Context) ([]MailboxRecipient, error) {
	me, inTmux, err := t.identity(ctx)
	if err != nil {
		return nil, err
	}
	names, _, err := t.candidates(ctx, inTmux)
	if err != nil {
		return nil, err
	}
	ign := t.ignored()
	out := struct {
		Recipients []MailboxRecipient `json:"recipients"`
	}{Recipients: []MailboxRecipient{}}
	sawMe := false
	for _, n := range names {
		switch {
		case sameName(n, me, inTmux):
			sawMe = true
			out.Recipients = append(out.Recipients, MailboxRecipient{Name: n, IsCurrent: true}) // always shown
		case !ign[n]:
			out.Recipients = append(out.Recipients, MailboxRecipient{Name: n})
		}
	}
	if !sawMe { // outside tmux before the first send: the caller is not registered yet
		out.Recipients = append([]MailboxRecipient{{Name: me, IsCurrent: true}}, out.Recipients...)
	}
	return out.Recipients, nil
}

// tmuxWindows is what the mailbox set asks tmux: whether the process runs
// inside it, the caller's window and its session's windows (tmux.Client
// answers, running tmux; tests may stand in).
type tmuxWindows interface {
	Inside() bool
	Current(ctx context.Context) (string, error)
	Windows(ctx context.Context) ([]string, error)
}

// ErrTmuxSessionEnded is what WatchTmuxSession returns when the tmux
// session the server runs in is gone; serve exits with status 1 on it.
var ErrTmuxSessionEnded = errors.New("the tmux session ended: the mailbox server exits with its session")

// WatchTmuxSession blocks until ctx ends (nil) or the tmux session this
// process runs in disappears (ErrTmuxSessionEnded). The end comes from the
// process's control-mode client (tmux's %exit, or its server gone), within
// moments of the session's end; where control mode cannot start, it polls
// `tmux has-session` every poll (250 ms when 0) instead. Outside tmux it
// returns nil at once.
func WatchTmuxSession(ctx context.Context, getenv func(string) string, poll time.Duration) error {
	env, inside := tmux.EnvFrom(getenv)
	if !inside {
		return nil
	}
	for {
		f, err := tmux.Shared(ctx, env)
		if err != nil {
			return pollTmuxSession(ctx, env, poll)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.Done():
		}
		if errors.Is(f.Err(), tmux.ErrSessionEnded) {
			return ErrTmuxSessionEnded
		}
		// Detached by someone, the session lives: follow it again.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pollTmuxSession is WatchTmuxSession without control mode: one
// `tmux has-session` every poll.
func pollTmuxSession(ctx context.Context, env tmux.Env, poll time.Duration) error {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	sess, err := tmux.Exec{Env: env}.Session(ctx)
	if err != nil || sess == "" {
		return fmt.Errorf("%w (%v)", ErrTmuxSessionEnded, err)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		err := env.HasSession(ctx, sess)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, tmux.ErrSessionEnded) { // a slow tmux is not a gone session
			return ErrTmuxSessionEnded
		}
	}
}
