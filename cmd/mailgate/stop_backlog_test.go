package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestStopUnderBacklogSaysWhatItLeaves is issue 31 item 6: a server stopped
// with SIGTERM while Gmail is slow (the mirror's outbox backs up) and the
// vault cannot take the archive (a file where its folder goes) logs, with
// counts, what each queue still holds, and still exits within its bound.
func TestStopUnderBacklogSaysWhatItLeaves(t *testing.T) {
	parallelLong(t, 1)
	w := newWorld(t, false)
	vault := filepath.Join(w.home, "vault")
	if err := os.MkdirAll(vault, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "AgentMail"), []byte("in the way\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir = "/"
	cmd.Env = append(append([]string{}, w.env...), "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_MIRROR=gmail", "MAILGATE_LOG_LEVEL=warn")
	var stderr testutil.Buffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "backlog", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	must := func(name string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", name, err, res)
		}
	}
	project := t.TempDir()
	w.gm.SetLatency(2 * time.Second) // every Gmail call, the mirror's inserts included, hangs (30 inserts in lanes take far longer than the sends)
	must("ensure_project", map[string]any{"human_key": project})
	for _, n := range []string{"BlueLake", "GreenCastle"} {
		must("register_agent", map[string]any{"project_key": project, "name": n})
	}
	const sent = 30
	for i := range sent {
		must("send_message", map[string]any{"project_key": project, "sender_name": "BlueLake", "to": []string{"GreenCastle"},
			"subject": fmt.Sprintf("update %d", i), "body_md": "hello"})
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stat := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "stat")
	testutil.Eventually(t, 30*time.Second, func() error {
		b, err := os.ReadFile(stat)
		if err != nil {
			return nil
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return nil
		}
		return fmt.Errorf("the server has not exited 30 s after SIGTERM")
	})
	cs.Close()
	w.gm.SetLatency(0)
	log := stderr.String()
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`mirror: stopping with (\d+) agent-mail messages not yet mirrored into Gmail .*sink=gmail queued=(\d+)`),
		regexp.MustCompile(`mirror: stopping with (\d+) agent-mail messages not yet archived in the vault .*sink=archive queued=(\d+)`),
	} {
		m := re.FindStringSubmatch(log)
		if m == nil {
			t.Errorf("the stop's log does not say what it left (%s):\n%s", re, log)
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n < 1 || n > sent {
			t.Errorf("%s queued messages named, of %d sent:\n%s", m[1], sent, log)
		}
	}
}
