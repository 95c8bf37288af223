// Package tmux tells a process which tmux window it runs in and which
// windows its session has, without starting a tmux process per question.
//
// A Follower keeps one control-mode client (`tmux -C attach-session`,
// without output and without a say in the window size) attached to the
// session of the process's pane. It learns the window names and the window
// list once, then follows tmux's notifications (%window-renamed updates a
// name in place; windows added, closed, moved or unlinked, and sessions
// created or destroyed, make it read the list again over the same
// connection) and ends when the session does (%exit, or the connection
// closing, confirmed by one `has-session`). A question asked while a
// re-read is in flight waits for it, so the answers follow every
// notification tmux has sent by then.
//
// Exec answers the same questions with one tmux process per question: the
// fallback where control mode is unavailable (tmux older than 3.2, which has
// no attach flags) or failed to start.
package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// View answers who the caller is and who else is in its session.
type View interface {
	// Current is the name of the window the process's pane is in.
	Current(ctx context.Context) (string, error)
	// Windows are the names of the session's windows, in index order.
	Windows(ctx context.Context) ([]string, error)
}

// ErrSessionEnded reports that the followed session no longer exists.
var ErrSessionEnded = errors.New("the tmux session ended")

// Env is where a process inside tmux is: the TMUX and TMUX_PANE variables
// tmux gives every program in a pane.
type Env struct {
	TMUX string // "socket,server-pid,session-index"
	Pane string // "%N"
}

// EnvFrom reads Env through getenv; ok is false outside tmux.
func EnvFrom(getenv func(string) string) (Env, bool) {
	e := Env{TMUX: getenv("TMUX"), Pane: getenv("TMUX_PANE")}
	return e, e.TMUX != ""
}

// Socket is the server socket's path (TMUX's first field).
func (e Env) Socket() string {
	s, _, _ := strings.Cut(e.TMUX, ",")
	return s
}

// target is the pane when known, else the session TMUX names.
func (e Env) target() string {
	if e.Pane != "" {
		return e.Pane
	}
	parts := strings.Split(e.TMUX, ",")
	if len(parts) == 3 && parts[2] != "" {
		return "$" + parts[2]
	}
	return ""
}

// command is tmux on e's server, with TMUX removed from its environment
// (the socket is named with -S, and a TMUX would make attach refuse to nest).
func (e Env) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-S", e.Socket()}, args...)...)
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			out = append(out, kv)
		}
	}
	cmd.Env = out
	return cmd
}

// HasSession runs `tmux has-session` once: nil when the session (a "$N" id
// or a pane's session) exists, ErrSessionEnded when tmux says it does not,
// another error when tmux could not be asked in time.
func (e Env) HasSession(ctx context.Context, target string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := e.command(ctx, "has-session", "-t", target).Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ErrSessionEnded
	default:
		return fmt.Errorf("tmux has-session: %w", err)
	}
}

// Exec is the View of one tmux process per question.
type Exec struct{ Env Env }

func (x Exec) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out, err := x.Env.command(ctx, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("tmux %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("tmux %s: %w", args[0], err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func (x Exec) targetArgs() []string {
	if t := x.Env.target(); t != "" {
		return []string{"-t", t}
	}
	return nil
}

// Current implements View.
func (x Exec) Current(ctx context.Context) (string, error) {
	return x.run(ctx, append(append([]string{"display-message", "-p"}, x.targetArgs()...), "#W")...)
}

// Windows implements View.
func (x Exec) Windows(ctx context.Context) ([]string, error) {
	out, err := x.run(ctx, append(append([]string{"list-windows"}, x.targetArgs()...), "-F", "#W")...)
	if err != nil {
		return nil, err
	}
	var ws []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			ws = append(ws, l)
		}
	}
	return ws, nil
}

// Session is the id ($N) of the session the process runs in.
func (x Exec) Session(ctx context.Context) (string, error) {
	return x.run(ctx, append(append([]string{"display-message", "-p"}, x.targetArgs()...), "#{session_id}")...)
}

// shared holds one Follower per pane for the whole process: the tools and
// the session watcher of one server share its connection.
var shared struct {
	sync.Mutex
	m      map[Env]*Follower
	failed map[Env]time.Time // when control mode last failed to start for a pane
}

// retryFollow is how long after a failed start Shared fails at once (the
// caller falls back to Exec) instead of starting a client again.
const retryFollow = 30 * time.Second

// Shared returns the process's Follower for e, starting it on first use (or
// again after its session ended, so a question gets a fresh answer: usually
// that the session is gone). It fails when control mode cannot start; the
// caller then falls back to Exec.
func Shared(ctx context.Context, e Env) (*Follower, error) {
	shared.Lock()
	defer shared.Unlock()
	if f := shared.m[e]; f != nil {
		select {
		case <-f.Done():
		default:
			return f, nil
		}
	}
	if at, ok := shared.failed[e]; ok && time.Since(at) < retryFollow {
		return nil, errors.New("tmux control mode failed to start a moment ago")
	}
	f, err := Follow(ctx, e)
	if err != nil {
		if shared.failed == nil {
			shared.failed = map[Env]time.Time{}
		}
		shared.failed[e] = time.Now()
		return nil, err
	}
	delete(shared.failed, e)
	if shared.m == nil {
		shared.m = map[Env]*Follower{}
	}
	shared.m[e] = f
	return f, nil
}

// Client asks the tmux the process runs in ($TMUX and $TMUX_PANE, as
// Getenv reads them) who the caller is and who else is in its session. Its
// questions go to the process's control-mode client (Shared: one connection
// that follows tmux's notifications), or, where control mode cannot start,
// to one tmux process per question.
type Client struct {
	Getenv  func(string) string
	PerCall bool // always one tmux process per question (a command that asks once)
}

// Inside reports whether the process runs inside tmux.
func (c Client) Inside() bool { return c.Getenv("TMUX") != "" }

func (c Client) view(ctx context.Context) View {
	env, _ := EnvFrom(c.Getenv)
	if c.PerCall {
		return Exec{Env: env}
	}
	if f, err := Shared(ctx, env); err == nil {
		return f
	}
	return Exec{Env: env}
}

// Current is the name of the window the process's pane is in.
func (c Client) Current(ctx context.Context) (string, error) { return c.view(ctx).Current(ctx) }

// Windows are the names of the session's windows, in index order.
func (c Client) Windows(ctx context.Context) ([]string, error) { return c.view(ctx).Windows(ctx) }
