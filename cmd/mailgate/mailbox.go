package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/gitrepo"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/tmux"
)

// `mailgate mailbox …` is the four-tool system's command line (the tmux
// agent-mail CLI: send, receive, status, recipients) on mailgate's store,
// with that CLI's arguments, output and exit codes, so shell hooks switch by
// changing the command name. It runs the mailbox tool set's own operations
// (mailboxset.Caller): identity (tmux window, else AGENT_NAME), project
// (the git top level), recipients and refusals are the MCP tools'.

const mailboxUsage = `Usage:
  mailgate mailbox send [-r RECIPIENT] [-m MESSAGE] [RECIPIENT] [MESSAGE]
                                    send a message (or pipe it on stdin); prints "Message #ID sent"
  mailgate mailbox receive [--hook] print your oldest unread message and mark it read
  mailgate mailbox status ready|work|offline
                                    set your availability (silent)
  mailgate mailbox recipients       list the agents you can send to, yours marked [you]
  mailgate mailbox import DIR       bring an existing .agentmail/ mailbox (DIR or DIR/.agentmail) into the store, once

You are your tmux window (else AGENT_NAME); the project is the git top level
of the working directory. Exit status: 0 done, 1 refused or failed, 2 no
identity (receive --hook: 2 when a message was printed, on stderr).
Configuration flags (--db, --home, …) go before the subcommand.
`

// exitStatus ends a command with that status; its message is already
// printed (the mailbox commands keep the original CLI's texts and codes).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func mailboxCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("mailbox", flag.ContinueOnError)
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	rest := fset.Args()
	if len(rest) == 0 {
		return usageError("mailbox", "a subcommand is needed: send, receive, status, recipients or import")
	}
	level := env.getenv("MAILGATE_LOG_LEVEL")
	if level == "" {
		level = "warn" // a command's stderr is for its own messages
	}
	logger, err := newLogger(env.stderr, level)
	if err != nil {
		return err
	}
	co := mailboxset.CallerOptions{Getenv: env.getenv, DefaultProjectKey: env.defaultProjectKey(ctx)}
	// A command asks tmux once or twice and exits: one tmux process per
	// question, not a control-mode client the session's hooks see come and go.
	win := tmux.Client{Getenv: env.getenv, PerCall: true}
	verb, vargs := rest[0], rest[1:]
	if (verb == "status" || verb == "recipients" || verb == "import") && slices.ContainsFunc(vargs, isHelpFlag) {
		fmt.Fprint(env.stdout, mailboxUsage) // send and receive parse their own flags, -h included
		return nil
	}
	var exp mailboxset.Export
	switch verb {
	case "send", "receive", "status", "recipients":
	case "import":
		if len(vargs) != 1 {
			return usageError("mailbox", "import takes one DIR (a folder holding .agentmail/, or the .agentmail/ folder itself), not %d arguments", len(vargs))
		}
		if exp, err = mailboxset.ReadDir(vargs[0]); err != nil {
			return err
		}
		// The original keeps .agentmail at its git root: that is the project.
		if co.ProjectKey, err = filepath.Abs(filepath.Dir(exp.Dir)); err != nil {
			return err
		}
	default:
		hint := ""
		if near := nearest(verb, []string{"send", "receive", "status", "recipients", "import"}); near != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", near)
		}
		return usageError("mailbox", "unknown subcommand %q%s: use send, receive, status, recipients or import", verb, hint)
	}

	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		if store.IsPostgres(cfg.DB) {
			return fmt.Errorf("MAILGATE_DB: %w", err)
		}
		return fmt.Errorf("MAILGATE_DB %s: %w", cfg.DB, err)
	}
	defer db.Close()
	svc, st, err := amstore.NewServiceStore(ctx, db, agentmail.Options{Logger: logger, NameMode: agentmail.NameMode(cfg.NameMode), Protected: protectedPaths(cfg)})
	if err != nil {
		return fmt.Errorf("opening the agent-mail store: %w", err)
	}
	defer svc.Close() // before the DB's: it indexes what it queued
	ops := mailboxset.NewCaller(svc, st.Mailboxes(), win, co)
	if verb == "import" {
		// The same directory as the other commands' project (the git top
		// level) keeps their spelling of it, so both name one project even
		// when a symlink is on the way.
		if def := mailboxset.NewCaller(svc, st.Mailboxes(), win, mailboxset.CallerOptions{Getenv: env.getenv, DefaultProjectKey: env.defaultProjectKey(ctx)}); sameDir(def.ProjectKey(), co.ProjectKey) {
			ops = def
		}
	}

	switch verb {
	case "send":
		return mailboxSend(ctx, env, ops, vargs)
	case "receive":
		return mailboxReceive(ctx, env, ops, vargs)
	case "status":
		return mailboxStatus(ctx, env, ops, vargs)
	case "recipients":
		return mailboxRecipients(ctx, env, ops, vargs)
	}
	res, err := ops.Mailbox().Import(ctx, exp)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Imported %d messages (%d unread) and %d statuses from %s into project %s", res.Imported, res.Unread, res.Statuses, exp.Dir, ops.ProjectKey())
	if res.Skipped > 0 {
		fmt.Fprintf(env.stdout, "; %d messages were imported before and skipped", res.Skipped)
	}
	fmt.Fprintln(env.stdout)
	return nil
}

// defaultProjectKey is the mailbox set's default project for a run in
// another working directory than the process's (env.dir: tests run the
// command in-process), nil for mailboxset's own default.
func (env *environment) defaultProjectKey(ctx context.Context) func() string {
	if env.dir == "" {
		return nil
	}
	return func() string {
		if key, err := gitrepo.ProjectKey(ctx, env.dir); err == nil {
			return key
		}
		return "/"
	}
}

func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// mailboxFail prints a refusal as the original does ("error: …") and picks
// its exit status: 2 without an identity (the original's "not in tmux"), else 1.
func mailboxFail(env *environment, ops *mailboxset.Caller, op string, err error) error {
	fmt.Fprintln(env.stderr, "error: "+ops.ErrorText(op, err))
	if errors.Is(err, mailboxset.ErrNoIdentity) {
		return exitStatus(2)
	}
	return exitStatus(1)
}

func mailboxSend(ctx context.Context, env *environment, ops *mailboxset.Caller, args []string) error {
	fs := flag.NewFlagSet("mailbox send", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var recipient, message string
	fs.StringVar(&recipient, "recipient", "", "recipient (tmux window name or agent name)")
	fs.StringVar(&recipient, "r", "", "recipient (shorthand)")
	fs.StringVar(&message, "message", "", "message content")
	fs.StringVar(&message, "m", "", "message content (shorthand)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exitStatus(1)
	}
	pos := fs.Args()
	if recipient == "" && len(pos) > 0 {
		recipient, pos = pos[0], pos[1:]
	}
	if message == "" && len(pos) > 0 {
		message = pos[0]
	}
	if _, err := ops.Identity(ctx); err != nil {
		return mailboxFail(env, ops, "send", err)
	}
	if recipient == "" {
		fmt.Fprintln(env.stderr, "error: missing required arguments: recipient message")
		return exitStatus(1)
	}
	// As the original: a piped stdin is the message, ahead of an argument,
	// minus one trailing newline.
	if in, ok := pipedStdin(env.stdin); ok {
		b, err := io.ReadAll(io.LimitReader(in, mailboxset.MaxBytes+2))
		if err != nil {
			fmt.Fprintf(env.stderr, "error: failed to read stdin: %v\n", err)
			return exitStatus(1)
		}
		if s := strings.TrimSuffix(string(b), "\n"); s != "" {
			message = s
		}
	}
	if message == "" {
		fmt.Fprintln(env.stderr, "error: no message provided")
		fmt.Fprintln(env.stderr, "usage: mailgate mailbox send <recipient> <message>")
		return exitStatus(1)
	}
	id, err := ops.Send(ctx, recipient, message)
	if err != nil {
		return mailboxFail(env, ops, "send", err)
	}
	fmt.Fprintf(env.stdout, "Message #%d sent\n", id)
	return nil
}

// pipedStdin is stdin when it is a pipe or a file (not a terminal, not
// /dev/null), as the original reads it.
func pipedStdin(r io.Reader) (io.Reader, bool) {
	if r == nil {
		return nil, false
	}
	f, ok := r.(*os.File)
	if !ok {
		return r, true
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, false
	}
	return f, fi.Mode()&os.ModeNamedPipe != 0 || fi.Mode().IsRegular()
}

func mailboxReceive(ctx context.Context, env *environment, ops *mailboxset.Caller, args []string) error {
	fs := flag.NewFlagSet("mailbox receive", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	hook := fs.Bool("hook", false, "hook mode: a message goes to stderr with exit status 2; nothing else is printed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return exitStatus(1)
	}
	msg, ok, err := ops.Receive(ctx)
	switch {
	case *hook && (err != nil || !ok):
		return nil // hooks never fail the agent's turn
	case err != nil:
		return mailboxFail(env, ops, "receive", err)
	case !ok:
		fmt.Fprintln(env.stdout, "No unread messages")
		return nil
	case *hook:
		fmt.Fprintln(env.stderr, "You got new mail")
		printMailboxMessage(env.stderr, msg)
		return exitStatus(2)
	}
	printMailboxMessage(env.stdout, msg)
	return nil
}

// printMailboxMessage is the original's format: From, ID, a blank line and
// the message as it is (no newline added).
func printMailboxMessage(w io.Writer, m mailboxset.Message) {
	fmt.Fprintf(w, "From: %s\nID: %s\n\n%s", m.From, m.ID, m.Message)
}

func mailboxStatus(ctx context.Context, env *environment, ops *mailboxset.Caller, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.stderr, "error: missing required argument: status")
		fmt.Fprintln(env.stderr, "usage: mailgate mailbox status <ready|work|offline>")
		return exitStatus(1)
	}
	// A status that is none of the three is refused with or without an
	// identity: a hook with a typo must not pass silently.
	if !slices.Contains([]string{"ready", "work", "offline"}, args[0]) {
		fmt.Fprintln(env.stderr, mailboxset.InvalidStatus(args[0]).(*agentmail.Error).Message)
		return exitStatus(1)
	}
	// As the original: without an identity (its "outside tmux") a valid
	// status is a silent no-op, so session hooks work anywhere.
	if _, err := ops.Identity(ctx); errors.Is(err, mailboxset.ErrNoIdentity) {
		return nil
	}
	if err := ops.SetStatus(ctx, args[0]); err != nil {
		var ae *agentmail.Error
		if errors.As(err, &ae) && errors.Is(err, agentmail.ErrInvalidArgument) {
			fmt.Fprintln(env.stderr, ae.Message) // "Invalid status: …", unprefixed as in the original
			return exitStatus(1)
		}
		return mailboxFail(env, ops, "status", err)
	}
	return nil
}

func mailboxRecipients(ctx context.Context, env *environment, ops *mailboxset.Caller, _ []string) error {
	rs, err := ops.Recipients(ctx)
	if err != nil {
		return mailboxFail(env, ops, "recipients", err)
	}
	for _, r := range rs {
		if r.IsCurrent {
			fmt.Fprintf(env.stdout, "%s [you]\n", r.Name)
		} else {
			fmt.Fprintln(env.stdout, r.Name)
		}
	}
	return nil
}
