//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestNoProcessOutlivesServer: no process mailgate starts outlives it,
// however it ends — stopped by its client closing stdin, terminated, or
// killed at any moment of its start-up. Each run of mailgate carries a mark
// in its environment, which every process it starts inherits; once mailgate
// has ended, /proc must hold no process with that mark.
//
// The mailbox set's tmux control-mode client is the process that leaked:
// killed while that client was still attaching, about one server in thirty
// left it attached for ever (keeping the tmux server alive). The kills below
// are spread over the start-up for that reason; the delays place the kill,
// nothing is asserted about time. make test (MAILGATE_TEST_FULL) kills
// sixteen servers 40 ms apart; a plain go test four, 160 ms apart, over
// the same start-up.
func TestNoProcessOutlivesServer(t *testing.T) {
	parallelLong(t, 2)
	t.Run("mailbox in tmux", func(t *testing.T) {
		if _, err := exec.LookPath("tmux"); err != nil {
			t.Skip("tmux is not installed (.ci/run installs it)")
		}
		sock := t.TempDir() + "/tmux.sock"
		tmux := func(args ...string) (string, error) {
			out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := tmux("new-session", "-d", "-s", "leak", "-n", "alpha", "sleep 600"); err != nil {
			t.Fatalf("tmux: %v %s", err, out)
		}
		t.Cleanup(func() { tmux("kill-server") })
		pane, err := tmux("display-message", "-p", "-t", "leak:alpha", "#{pane_id}")
		if err != nil {
			t.Fatal(err)
		}
		home := t.TempDir()
		env := []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=mailbox",
			"TMUX=" + sock + ",1,0", "TMUX_PANE=" + pane, "MAILGATE_LOG_LEVEL=error"}
		attached := func() bool {
			out, err := tmux("list-clients", "-t", "leak")
			return err == nil && out != ""
		}
		kills := testutil.Size(4, 16)
		for i := range kills {
			mark := fmt.Sprintf("tmux-kill-%d", i)
			s := startMarked(t, mark, env, "serve")
			time.Sleep(time.Duration(i) * 640 / time.Duration(kills) * time.Millisecond) // where in the start-up the kill lands
			s.signal(syscall.SIGKILL)
			s.wait()
			assertNoSurvivor(t, mark)
		}
		for _, end := range []string{"SIGKILL", "SIGTERM", "stdin closed"} {
			mark := "tmux-attached-" + strings.ReplaceAll(end, " ", "-")
			s := startMarked(t, mark, env, "serve")
			testutil.Eventually(t, 20*time.Second, func() error {
				if !attached() {
					return fmt.Errorf("the server never attached to the session\n%s", s.stderr.String())
				}
				return nil
			})
			switch end {
			case "SIGKILL":
				s.signal(syscall.SIGKILL)
			case "SIGTERM":
				s.signal(syscall.SIGTERM)
			default:
				s.stdin.Close()
			}
			s.wait()
			assertNoSurvivor(t, mark)
		}
	})

	t.Run("watch --exec killed while its hook runs", func(t *testing.T) {
		home := t.TempDir()
		w, project, sender := agentMailWorld(t, home, "GreenDog", "BlueLake")
		const mark = "watch-exec"
		s := startMarked(t, mark, w.env, "watch", "--project", project, "--agent", "BlueLake", "--interval", "50ms",
			"--exec", "sleep 600")
		testutil.Eventually(t, 20*time.Second, func() error {
			if !strings.Contains(s.stderr.String(), "following") {
				return fmt.Errorf("watch has not started: %q", s.stderr.String())
			}
			return nil
		})
		if text, isErr := call(t, sender, "send_message", map[string]any{"project_key": project, "sender_name": "GreenDog",
			"to": []string{"BlueLake"}, "subject": "wake up", "body_md": "b"}); isErr {
			t.Fatalf("send_message: %s", text)
		}
		testutil.Eventually(t, 20*time.Second, func() error {
			for _, p := range marked(mark) {
				if strings.HasPrefix(p.Args, "sleep 600") {
					return nil
				}
			}
			return fmt.Errorf("the hook never ran; watch said:\n%s", s.stderr.String())
		})
		s.signal(syscall.SIGKILL)
		s.wait()
		assertNoSurvivor(t, mark)
	})

	t.Run("stdio and http servers killed", func(t *testing.T) {
		for _, args := range [][]string{{"serve"}, {"serve", "--http", "127.0.0.1:0"}} {
			mark := "kill-" + strings.Join(args, "-")
			home := t.TempDir()
			env := []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "HOME=" + home, "MAILGATE_LOG_LEVEL=error"}
			s := startMarked(t, mark, env, args...)
			testutil.Eventually(t, 20*time.Second, func() error {
				if len(marked(mark)) == 0 {
					return fmt.Errorf("%v never started\n%s", args, s.stderr.String())
				}
				return nil
			})
			s.signal(syscall.SIGKILL)
			s.wait()
			assertNoSurvivor(t, mark)
		}
	})
}

const leakMarkVar = "MAILGATE_TEST_LEAK_MARK"

// markEnv is the environment entry carrying mark: with this test
// process's id, so that two runs of the suite at once on one machine (or
// another checkout's) never count, or kill, each other's processes.
func markEnv(mark string) string { return leakMarkVar + "=" + strconv.Itoa(os.Getpid()) + "-" + mark }

type markedRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testutil.Buffer // stdout and stderr
}

// startMarked starts the built binary with env and the mark; its stdin
// stays open, as a client's does, until the test closes it.
func startMarked(t *testing.T, mark string, env []string, args ...string) *markedRun {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	cmd.Dir = "/"
	cmd.Env = append(append([]string(nil), env...), markEnv(mark))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &markedRun{t: t, cmd: cmd, stdin: stdin, stderr: &testutil.Buffer{}}
	cmd.Stdout, cmd.Stderr = r.stderr, r.stderr // one transcript, for failures
	cmd.WaitDelay = 5 * time.Second             // a survivor holding the pipes must not hold the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		killMarked(mark)
	})
	return r
}

func (r *markedRun) signal(s syscall.Signal) {
	if err := r.cmd.Process.Signal(s); err != nil {
		r.t.Fatalf("signal %v: %v", s, err)
	}
}

// wait reaps mailgate, so that its own /proc entry is gone.
func (r *markedRun) wait() {
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		r.cmd.Process.Kill()
		<-done
		r.t.Fatalf("mailgate did not end 30 s after being told to\n%s", r.stderr.String())
	}
	r.stdin.Close()
}

// marked lists the live processes whose environment carries the mark.
func marked(mark string) []testutil.Proc { return testutil.ProcessesWithEnv(markEnv(mark)) }

func killMarked(mark string) {
	for _, p := range marked(mark) {
		syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// assertNoSurvivor: once mailgate has ended, what it started ends too.
// Ending takes a moment (the signal is delivered, the process exits), so
// this waits for it, and fails naming what is still there.
func assertNoSurvivor(t *testing.T, mark string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		if ps := marked(mark); len(ps) > 0 {
			return fmt.Errorf("%d process(es) outlived mailgate (%s): %v", len(ps), mark, ps)
		}
		return nil
	})
}
