package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/childproc"
)

// execHook is `mailgate watch --exec CMD`: it runs CMD once for each
// message that arrives while watch runs (for --agent, each message that
// agent receives), so an agent busy on a task can be woken by its client's
// hook (Claude Code's, a tmux send-keys, a desktop notification) instead
// of polling its inbox.
//
// What the message says reaches CMD only through environment variables,
// never through the command line: a subject such as `$(rm -rf ~)` is text
// in $MAILGATE_SUBJECT, not a command, as long as CMD quotes it ("$VAR").
// The commands run one at a time, in message order; one that fails or
// outlives its timeout is reported on stderr and the next message still
// gets its run.
type execHook struct {
	command string
	agent   string // only messages to this agent (To, Cc or Bcc); "" is every message
	timeout time.Duration
	stdout  io.Writer
	stderr  io.Writer
}

// wants reports whether m is for the hook's agent.
func (h *execHook) wants(m agentmail.MessagePayload) bool {
	if h.agent == "" {
		return true
	}
	return slices.Contains(m.To, h.agent) || slices.Contains(m.CC, h.agent) || slices.Contains(m.BCC, h.agent)
}

// run runs the command for one message.
func (h *execHook) run(ctx context.Context, p agentmail.ProjectView, m agentmail.MessagePayload) {
	if !h.wants(m) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	cmd := shellCommand(ctx, h.command)
	thread := ""
	if m.ThreadID != nil {
		thread = *m.ThreadID
	}
	cmd.Env = append(os.Environ(),
		"MAILGATE_MESSAGE_ID="+strconv.FormatInt(m.ID, 10),
		"MAILGATE_PROJECT="+p.HumanKey,
		"MAILGATE_PROJECT_SLUG="+p.Slug,
		"MAILGATE_AGENT="+h.agent,
		"MAILGATE_FROM="+m.From,
		"MAILGATE_SUBJECT="+m.Subject,
		"MAILGATE_THREAD_ID="+thread,
		"MAILGATE_IMPORTANCE="+m.Importance,
		"MAILGATE_ACK_REQUIRED="+strconv.FormatBool(m.AckRequired),
	)
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	cmd.WaitDelay = time.Second // a child that keeps the pipes open does not hold watch
	if err := cmd.Run(); err != nil {
		why := err.Error()
		if ctx.Err() == context.DeadlineExceeded {
			why = fmt.Sprintf("stopped after %s (--exec-timeout)", h.timeout)
		}
		fmt.Fprintf(h.stderr, "mailgate watch: --exec for message #%d: %s\n", m.ID, why)
	}
}

// shellCommand runs command through the platform's shell, so --exec takes
// what a user would type (pipes, quotes, variables).
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		return exec.CommandContext(ctx, "cmd", "/C", command)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", hookShell, "mailgate-hook", command)
	childproc.Group(cmd)
	childproc.Tie(cmd)
	return cmd
}

// hookShell runs the hook (its $1) so that nothing it starts outlives
// watch. The hook's shell forks what it runs (dash does, even for a single
// command), so ending that shell alone would leave the rest. A timeout or
// watch's stop kills the hook's process group (childproc.Group); a watch
// killed outright can kill nothing, but the kernel then sends this outer
// shell SIGTERM (childproc.Tie) and its trap kills the group. The hook's
// exit status is wait's.
const hookShell = `trap 'kill -KILL 0' TERM; /bin/sh -c "$1" & wait $!`
