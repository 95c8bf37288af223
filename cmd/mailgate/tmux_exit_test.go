package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMailboxServerExitsWhenTmuxSessionEnds: the mailbox set's server, run in
// a tmux window, exits with status 1 soon after its tmux session is killed.
func TestMailboxServerExitsWhenTmuxSessionEnds(t *testing.T) {
	parallel(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	sock := t.TempDir() + "/tmux.sock"
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := tmux("new-session", "-d", "-s", "mgexit", "-n", "alpha", "sleep 60"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	defer tmux("kill-server")
	pane, err := tmux("display-message", "-p", "-t", "mgexit:alpha", "#{pane_id}")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir = "/"
	// As seen from inside the window: $TMUX names the server socket and $TMUX_PANE the pane.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=mailbox",
		"TMUX=" + sock + ",1,0", "TMUX_PANE=" + pane, "MAILGATE_LOG_LEVEL=warn"}
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	var stderr testutil.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// It watches the session through a control-mode client of its own: the
	// session's only client, as the session was started detached.
	testutil.Eventually(t, 10*time.Second, func() error {
		if out, err := tmux("list-clients", "-t", "mgexit"); err != nil || out == "" {
			return fmt.Errorf("the server never attached to the session: %q %v\n%s", out, err, stderr.String())
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("server stopped before the session ended: %v\n%s", err, stderr.String())
	default:
	}
	tmux("kill-session", "-t", "mgexit")
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("exit = %v, want status 1\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server still running 5 s after its tmux session ended\n%s", stderr.String())
	}
}
