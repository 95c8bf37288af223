package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestAgentMailEightProcesses: eight `mailgate serve` processes (one per
// agent, as each agent's client starts its own) share one store; each sends
// 500 messages (make test, MAILGATE_TEST_FULL; 60 in a plain go test),
// reading its inbox after every send. Every message must be delivered, and
// no call may fail.
func TestAgentMailEightProcesses(t *testing.T) {
	parallelLong(t, 2)
	if testing.Short() {
		t.Skip("8 processes × hundreds of sends")
	}
	const procs = 8
	sends := testutil.Size(60, 500)
	home, project := t.TempDir(), t.TempDir()
	connect := func() (*mcp.ClientSession, *exec.Cmd) {
		cmd := exec.Command(builtBinary(t), "serve")
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"}
		c := mcp.NewClient(&mcp.Implementation{Name: "stress", Version: "0"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, cmd
	}
	callJSON := func(cs *mcp.ClientSession, name string, args map[string]any, out any) error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: %v", name, res.Content)
		}
		if out != nil {
			b, _ := json.Marshal(res.StructuredContent)
			return json.Unmarshal(b, out)
		}
		return nil
	}
	names := []string{"BlueLake", "GreenCastle", "RedStone", "SilverFox", "GoldenRiver", "PurpleHill", "AmberWolf", "CrimsonOwl"}
	sessions := make([]*mcp.ClientSession, procs)
	for i := range sessions {
		sessions[i], _ = connect()
		if i == 0 {
			if err := callJSON(sessions[0], "ensure_project", map[string]any{"human_key": project}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := callJSON(sessions[i], "register_agent", map[string]any{"project_key": project, "name": names[i], "program": "stress", "model": "x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var errs atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := names[(i+1)%procs]
			for n := 0; n < sends; n++ {
				err := callJSON(cs, "send_message", map[string]any{"project_key": project, "sender_name": names[i], "to": []string{to},
					"subject": fmt.Sprintf("%s #%d", names[i], n), "body_md": "progress report"}, nil)
				if err == nil {
					err = callJSON(cs, "fetch_inbox", map[string]any{"project_key": project, "agent_name": names[i], "limit": 5}, nil)
				}
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := errs.Load(); n != 0 {
		t.Fatalf("%d calls failed; first: %v", n, firstErr.Load())
	}
	// Every agent received exactly the 500 sent to it.
	total := 0
	for i, cs := range sessions {
		var inbox struct {
			Messages []json.RawMessage `json:"messages"`
			Result   []json.RawMessage `json:"result"`
		}
		if err := callJSON(cs, "fetch_inbox", map[string]any{"project_key": project, "agent_name": names[i], "limit": 1000}, &inbox); err != nil {
			t.Fatal(err)
		}
		got := len(inbox.Messages) + len(inbox.Result)
		if got != sends {
			t.Errorf("%s has %d messages, want %d", names[i], got, sends)
		}
		total += got
	}
	t.Logf("%d processes × %d sends (each followed by an inbox read): %d delivered, 0 errors, %v (%.0f sends/s overall)",
		procs, sends, total, elapsed.Round(time.Millisecond), float64(procs*sends)/elapsed.Seconds())
}
