package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestSessionChatterIsDebug: a session's connect and disconnect, logged by
// go-sdk at info, reach stderr only at MAILGATE_LOG_LEVEL=debug.
func TestSessionChatterIsDebug(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		level slog.Level
		want  bool
	}{{slog.LevelInfo, false}, {slog.LevelDebug, true}} {
		t.Run(tt.level.String(), func(t *testing.T) {
			var buf testutil.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level}))
			srv, err := New(Deps{Version: "test", Logger: logger, Tools: []string{config.ToolsAgentMail}, AgentMail: newAMHarness(t).svc})
			if err != nil {
				t.Fatal(err)
			}
			ct, st := mcp.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs.Close()
			ss.Wait()
			got := strings.Contains(buf.String(), "session connected")
			if got != tt.want {
				t.Fatalf("at %v, session chatter logged = %v, want %v:\n%s", tt.level, got, tt.want, buf.String())
			}
			if got && !strings.Contains(buf.String(), "level=DEBUG") {
				t.Fatalf("session chatter not at debug:\n%s", buf.String())
			}
		})
	}
}
