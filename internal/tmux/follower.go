package tmux

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/childproc"
)

// answerWait bounds how long a question waits for the first read of the
// window list, or for a re-read a notification asked for.
const answerWait = 2 * time.Second

// Follower is a View over one control-mode client (see the package comment).
// Its methods are safe for concurrent use.
type Follower struct {
	env Env
	cmd *exec.Cmd
	in  io.WriteCloser

	kick chan struct{} // a re-read is wanted (buffered 1: requests coalesce)
	done chan struct{} // closed when the client has ended; err says why

	mu        sync.Mutex
	wake      chan struct{} // closed and replaced at every change of the state below
	requested uint64        // re-reads asked for (the first read is 1)
	completed uint64        // the last re-read whose answer is in the state
	session   string        // "$N"
	current   string        // the pane's window id ("@N"); "" when the pane is gone
	order     []string      // the session's window ids in index order
	names     map[string]string
	err       error // why the client ended (ErrSessionEnded when the session did)

	col collecting // the re-read being received (reader goroutine only)
}

// collecting accumulates one re-read's answer lines.
type collecting struct {
	session, window string
	order           []string
	names           map[string]string
}

// Follow starts a control-mode client on e's session and waits for its
// first read of the windows. It fails when tmux cannot run in control mode
// with these flags (tmux older than 3.2) or the session cannot be found.
func Follow(ctx context.Context, e Env) (*Follower, error) {
	target := e.target()
	if target == "" {
		return nil, errors.New("tmux: neither TMUX_PANE nor the session in TMUX is known")
	}
	// A control client whose attach fails may still answer the first
	// commands it was sent before it exits: make sure the target exists first
	// (one process, once per follower). tmux 3.3 answers display-message on a
	// missing pane with nothing and exit status 0, hence the empty check.
	if out, err := e.command(ctx, "display-message", "-p", "-t", target, "#{session_id}").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) == "" {
		return nil, fmt.Errorf("tmux: no pane or session %s (%s): %v", target, strings.TrimSpace(string(out)), err)
	}
	// Not CommandContext: the client lives as long as the follower, not
	// the call that started it. no-output: pane output is not sent to it;
	// ignore-size: it never resizes the agents' windows.
	cmd := e.command(context.Background(), "-C", "attach-session", "-f", "no-output,ignore-size", "-t", target)
	childproc.Tie(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("tmux control mode: %w", err)
	}
	f := &Follower{env: e, cmd: cmd, in: in, kick: make(chan struct{}, 1), done: make(chan struct{}),
		wake: make(chan struct{}), requested: 1}
	go f.read(out, &stderr)
	go f.write()
	f.kick <- struct{}{}

	wait, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	if err := f.await(wait); err != nil {
		f.Close()
		return nil, fmt.Errorf("tmux control mode: %w", err)
	}
	return f, nil
}

// Done is closed when the client has ended (see Err).
func (f *Follower) Done() <-chan struct{} { return f.done }

// Err is why the client ended: ErrSessionEnded when the session is gone;
// nil while it runs.
func (f *Follower) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Session is the followed session's id ("$N").
func (f *Follower) Session() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.session
}

// Close ends the client.
func (f *Follower) Close() error {
	f.in.Close()
	select {
	case <-f.done:
	case <-time.After(time.Second):
		f.cmd.Process.Kill()
		<-f.done
	}
	return nil
}

// Current implements View.
func (f *Follower) Current(ctx context.Context) (string, error) {
	if err := f.await(ctx); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.current == "" {
		return "", fmt.Errorf("tmux: pane %s is gone", f.env.Pane)
	}
	return f.names[f.current], nil
}

// Windows implements View.
func (f *Follower) Windows(ctx context.Context) ([]string, error) {
	if err := f.await(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, f.names[id])
	}
	return out, nil
}

// await waits until every re-read asked for before the call has been
// answered, or the client ended (its error).
func (f *Follower) await(ctx context.Context) error {
	f.mu.Lock()
	want := f.requested
	f.mu.Unlock()
	var timeout <-chan time.Time
	for {
		f.mu.Lock()
		if f.err != nil {
			err := f.err
			f.mu.Unlock()
			return err
		}
		if f.completed >= want {
			f.mu.Unlock()
			return nil
		}
		wake := f.wake
		f.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(answerWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return errors.New("tmux: no answer from the control-mode client in time")
		}
	}
}

// changed wakes every waiter; f.mu is held.
func (f *Follower) changed() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// want asks for a re-read.
func (f *Follower) want() {
	f.mu.Lock()
	f.requested++
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// write sends a re-read for each kick: the session and window of the pane,
// the session's windows, and a marker carrying the generation it answers.
// It runs apart from read, so a full pipe one way never blocks the other.
func (f *Follower) write() {
	for {
		select {
		case <-f.done:
			return
		case <-f.kick:
		}
		f.mu.Lock()
		gen, sess := f.requested, f.session
		f.mu.Unlock()
		list := f.env.target()
		if sess != "" {
			list = sess // the pane may be gone while its session lives
		}
		cmds := fmt.Sprintf("display-message -p -t %s 'mgsess #{session_id} #{window_id}'\n"+
			"list-windows -t %s -F 'mgwin #{window_id} #{window_name}'\n"+
			"display-message -p 'mgsync %d'\n", quote(f.env.target()), quote(list), gen)
		if _, err := io.WriteString(f.in, cmds); err != nil {
			return // the reader sees the end
		}
	}
}

// quote makes a target one tmux command-line word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// read follows the client's output until it ends.
func (f *Follower) read(out io.Reader, stderr *strings.Builder) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f.line(sc.Text())
	}
	werr := f.cmd.Wait()
	f.mu.Lock()
	sess := f.session
	f.mu.Unlock()
	// The client also ends when it is detached (detach-client) or the
	// server dies: one has-session tells a session's end from the rest.
	err := fmt.Errorf("tmux control-mode client ended (%v %s)", werr, strings.TrimSpace(stderr.String()))
	if sess != "" {
		if herr := f.env.HasSession(context.Background(), sess); errors.Is(herr, ErrSessionEnded) {
			err = ErrSessionEnded
		}
	}
	f.mu.Lock()
	f.err = err
	f.changed()
	f.mu.Unlock()
	close(f.done)
}

// line handles one line of control-mode output.
func (f *Follower) line(l string) {
	word, rest, _ := strings.Cut(l, " ")
	switch word {
	case "mgsess":
		f.col.session, f.col.window, _ = strings.Cut(rest, " ")
	case "mgwin":
		id, name, _ := strings.Cut(rest, " ")
		if f.col.names == nil {
			f.col.names = map[string]string{}
		}
		f.col.order = append(f.col.order, id)
		f.col.names[id] = name
	case "mgsync":
		gen, err := strconv.ParseUint(rest, 10, 64)
		if err != nil {
			return
		}
		c := f.col
		f.col = collecting{}
		f.mu.Lock()
		if c.session != "" {
			f.session, f.current = c.session, c.window
		} else {
			f.current = "" // the pane is gone
		}
		f.order, f.names = c.order, c.names
		if f.names == nil {
			f.names = map[string]string{}
		}
		f.completed = max(f.completed, gen)
		f.changed()
		f.mu.Unlock()
	case "%window-renamed":
		id, name, _ := strings.Cut(rest, " ")
		f.mu.Lock()
		if _, ok := f.names[id]; ok {
			f.names[id] = name
			f.changed()
		}
		f.mu.Unlock()
		if _, ok := f.col.names[id]; ok {
			f.col.names[id] = name
		}
	case "%window-add", "%window-close", "%unlinked-window-add", "%unlinked-window-close",
		"%unlinked-window-renamed", "%sessions-changed":
		f.want()
	case "%session-changed":
		// The client was moved to another session: ours was destroyed with
		// detach-on-destroy off. Leave; read() confirms the end.
		id, _, _ := strings.Cut(rest, " ")
		f.mu.Lock()
		sess := f.session
		f.mu.Unlock()
		if sess != "" && id != sess {
			f.in.Close()
		}
	}
}
