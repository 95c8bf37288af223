package tmux

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// server is a private tmux server (its own socket in a temporary directory)
// with a session "agents" whose windows are names, and a second session
// "elsewhere" whose windows must never show up.
type server struct {
	t    *testing.T
	sock string
}

func startServer(t *testing.T, names ...string) (*server, Env) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install -y tmux)")
	}
	s := &server{t: t, sock: filepath.Join(t.TempDir(), "s")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	s.run("new-session", "-d", "-s", "agents", "-n", names[0], "sleep 600")
	for _, n := range names[1:] {
		s.run("new-window", "-d", "-t", "agents", "-n", n, "sleep 600")
	}
	s.run("new-session", "-d", "-s", "elsewhere", "-n", "stranger", "sleep 600")
	pane := s.run("list-panes", "-t", "agents:"+names[0], "-F", "#{pane_id}")
	pid := s.run("display-message", "-p", "#{pid}")
	return s, Env{TMUX: s.sock + "," + pid + ",0", Pane: pane}
}

func (s *server) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// eventually polls f until it reports true; tmux's notifications arrive
// after the command that caused them returns (a real tmux server: no fake
// clock can stand in for it). The bound is generous: a loaded machine is
// no failure.
func eventually(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	testutil.Eventually(t, time.Minute, func() error {
		if ok, got := f(); !ok {
			return fmt.Errorf("%s: still %s", what, got)
		}
		return nil
	})
}

// follow starts a Follower on env, closed when the test ends.
func follow(t *testing.T, env Env) *Follower {
	t.Helper()
	f, err := Follow(context.Background(), env)
	return testutil.Closing(t, f, err)
}

// waitEnd waits (a minute at most) for f to end; failing says why it
// should have.
func waitEnd(t *testing.T, f *Follower, fail string) {
	t.Helper()
	select {
	case <-f.Done():
	case <-time.After(time.Minute):
		t.Fatal(fail)
	}
}

func windowsAre(f View, want ...string) func() (bool, string) {
	return func() (bool, string) {
		ws, err := f.Windows(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(ws, want), strings.Join(ws, ",")
	}
}

func currentIs(f View, want string) func() (bool, string) {
	return func() (bool, string) {
		w, err := f.Current(context.Background())
		if err != nil {
			return false, err.Error()
		}
		return w == want, w
	}
}

// TestFollowerTracksWindows: the first answers come from one read; renames,
// new windows and closed windows (in the session or elsewhere) are followed
// from tmux's notifications; the agents' own windows keep their size.
func TestFollowerTracksWindows(t *testing.T) {
	t.Parallel()
	s, env := startServer(t, "alice", "bob")
	f := follow(t, env)
	ctx := context.Background()
	if w, err := f.Current(ctx); err != nil || w != "alice" {
		t.Fatalf("Current = %q, %v", w, err)
	}
	if ws, err := f.Windows(ctx); err != nil || !slices.Equal(ws, []string{"alice", "bob"}) {
		t.Fatalf("Windows = %q, %v", ws, err)
	}
	if f.Session() != "$0" {
		t.Fatalf("Session = %q", f.Session())
	}

	s.run("rename-window", "-t", "agents:bob", "bobby")
	eventually(t, "after renaming bob", windowsAre(f, "alice", "bobby"))
	s.run("rename-window", "-t", "agents:alice", "alice-2")
	eventually(t, "after renaming the caller's window", currentIs(f, "alice-2"))

	s.run("new-window", "-d", "-t", "agents", "-n", "carol", "sleep 600")
	eventually(t, "after a new window", windowsAre(f, "alice-2", "bobby", "carol"))
	s.run("kill-window", "-t", "agents:bobby")
	eventually(t, "after closing bobby", windowsAre(f, "alice-2", "carol"))

	// Windows of another session never show; one moved in does.
	s.run("new-window", "-d", "-t", "elsewhere", "-n", "dave", "sleep 600")
	s.run("rename-window", "-t", "elsewhere:stranger", "stranger-2")
	s.run("move-window", "-s", "elsewhere:dave", "-t", "agents:")
	eventually(t, "after moving dave in (to the free index 1)", windowsAre(f, "alice-2", "dave", "carol"))

	// A pane leaving for a window of its own changes the caller's window.
	s.run("split-window", "-d", "-t", env.Pane, "sleep 600")
	s.run("break-pane", "-d", "-s", env.Pane, "-n", "alone")
	eventually(t, "after break-pane", currentIs(f, "alone"))

	select {
	case <-f.Done():
		t.Fatalf("follower ended while its session lives: %v", f.Err())
	default:
	}
}

// TestFollowerSessionEnds: killing the session, or the whole server, ends
// the follower with ErrSessionEnded; questions then fail.
func TestFollowerSessionEnds(t *testing.T) {
	t.Parallel()
	for _, kill := range [][]string{{"kill-session", "-t", "agents"}, {"kill-server"}} {
		t.Run(kill[0], func(t *testing.T) {
			s, env := startServer(t, "alice", "bob")
			f := follow(t, env)
			s.run(kill...)
			waitEnd(t, f, "follower still running 5 s after the session ended")
			if !errors.Is(f.Err(), ErrSessionEnded) {
				t.Fatalf("Err = %v, want ErrSessionEnded", f.Err())
			}
			if _, err := f.Windows(context.Background()); !errors.Is(err, ErrSessionEnded) {
				t.Fatalf("Windows after the end: %v", err)
			}
		})
	}
}

// TestFollowerServerKilled: a tmux server that dies without a word (SIGKILL)
// ends the follower as a session end.
func TestFollowerServerKilled(t *testing.T) {
	t.Parallel()
	s, env := startServer(t, "alice")
	f := follow(t, env)
	pid := s.run("display-message", "-p", "#{pid}")
	if err := exec.Command("kill", "-KILL", pid).Run(); err != nil {
		t.Fatal(err)
	}
	waitEnd(t, f, "follower still running 5 s after its server was killed")
	if !errors.Is(f.Err(), ErrSessionEnded) {
		t.Fatalf("Err = %v, want ErrSessionEnded", f.Err())
	}
}

// TestFollowerDetachedIsNotAnEnd: a client detached by someone else
// (detach-client -a, say) ends the follower without claiming the session
// ended; Shared then starts a new one that answers again.
func TestFollowerDetachedIsNotAnEnd(t *testing.T) {
	t.Parallel()
	s, env := startServer(t, "alice", "bob")
	f, err := Shared(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	s.run("detach-client", "-s", "agents")
	waitEnd(t, f, "follower still running after its client was detached")
	if err := f.Err(); err == nil || errors.Is(err, ErrSessionEnded) {
		t.Fatalf("Err = %v, want an end that is not ErrSessionEnded", err)
	}
	g, err := Shared(context.Background(), env)
	if err != nil || g == f {
		t.Fatalf("Shared after the detach = %p (was %p), %v", g, f, err)
	}
	defer g.Close()
	if w, err := g.Current(context.Background()); err != nil || w != "alice" {
		t.Fatalf("Current = %q, %v", w, err)
	}
}

// TestFollowerWithoutSession: a pane that does not exist is an error at
// once, so the caller can fall back.
func TestFollowerWithoutSession(t *testing.T) {
	t.Parallel()
	_, env := startServer(t, "alice")
	env.Pane = "%999"
	if f, err := Follow(context.Background(), env); err == nil {
		f.Close()
		t.Fatal("Follow on a missing pane succeeded")
	}
}

// TestExecMatchesFollower: the one-process-per-question fallback gives the
// same answers.
func TestExecMatchesFollower(t *testing.T) {
	t.Parallel()
	_, env := startServer(t, "alice", "bob", "carol")
	f := follow(t, env)
	ctx := context.Background()
	x := Exec{Env: env}
	for _, v := range []View{f, x} {
		if w, err := v.Current(ctx); err != nil || w != "alice" {
			t.Fatalf("%T Current = %q, %v", v, w, err)
		}
		if ws, err := v.Windows(ctx); err != nil || !slices.Equal(ws, []string{"alice", "bob", "carol"}) {
			t.Fatalf("%T Windows = %q, %v", v, ws, err)
		}
	}
	if id, err := x.Session(ctx); err != nil || id != f.Session() {
		t.Fatalf("Exec Session = %q, %v; follower %q", id, err, f.Session())
	}
}
