package mcpserver

import (
	"context"
	"log/slog"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/metrics"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

type seenCall struct {
	tool, id string
	failed   bool
}

type recordingObserver struct {
	mu    sync.Mutex
	calls []seenCall
}

func (o *recordingObserver) ToolCall(ctx context.Context, tool string, failed bool, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, seenCall{tool, metrics.RequestID(ctx), failed})
}

// Without HTTP (stdio, as the in-memory transport), every call gets a
// request id of its own: the observer sees it, and the call's log line
// carries it.
func TestCallObserverAndRequestID(t *testing.T) {
	svc, _ := openService(t, amtest.DSN(t))
	var logs testutil.Buffer
	obs := &recordingObserver{}
	srv, err := New(Deps{Tools: []string{config.ToolsAgentMail}, AgentMail: svc, Observer: obs,
		Logger: slog.New(metrics.LogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"health_check", nil},
		{"fetch_inbox", map[string]any{"project_key": "/nowhere", "agent_name": "X"}}, // a tool error
	} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatal(err)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.calls) != 2 || obs.calls[0].tool != "health_check" || obs.calls[0].failed ||
		obs.calls[1].tool != "fetch_inbox" || !obs.calls[1].failed {
		t.Fatalf("observed %+v", obs.calls)
	}
	if obs.calls[0].id == "" || obs.calls[0].id == obs.calls[1].id {
		t.Fatalf("request ids %q and %q", obs.calls[0].id, obs.calls[1].id)
	}
	for _, c := range obs.calls {
		if !regexp.MustCompile(`msg="tool call" tool=` + c.tool + ` .*request_id=` + regexp.QuoteMeta(c.id) + `\b`).MatchString(logs.String()) {
			t.Errorf("no tool call line for %s with request_id=%s:\n%s", c.tool, c.id, logs.String())
		}
	}
}
