package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// connectPending starts a server whose dependencies come from pending and
// returns a connected client session.
func connectPending(t *testing.T, tools []string, pending func(context.Context) (Deps, error)) *mcp.ClientSession {
	t.Helper()
	srv, err := New(Deps{Tools: tools, Pending: pending})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv)
}

// TestPendingDepsAnswerBeforeTheStore: a server built with Deps.Pending
// answers initialize and the lists while its store is still opening (the
// store is not there: they would block otherwise), its tool calls and
// resource reads wait for the store and then run on it, and what it
// lists is what a server built on the opened store lists.
func TestPendingDepsAnswerBeforeTheStore(t *testing.T) {
	t.Parallel()
	svc, _ := openService(t, amtest.DSN(t))
	release := make(chan struct{})
	tools := []string{config.ToolsAgentMail}
	cs := connectPending(t, tools, func(ctx context.Context) (Deps, error) {
		select {
		case <-release:
			return Deps{Tools: tools, AgentMail: svc}, nil
		case <-ctx.Done():
			return Deps{}, ctx.Err()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want, err := connectAM(t, svc).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listedJSON(listed.Tools), listedJSON(want.Tools); got != want {
		t.Fatalf("listed before the store opened:\n%s\nwant\n%s", got, want)
	}

	// A call made while the store opens waits for it; one whose caller
	// gives up first ends with the caller.
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := cs.CallTool(short, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}}); err == nil {
		t.Fatal("health_check answered before the store opened")
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ensure_project", Arguments: map[string]any{"human_key": "/tmp/pending"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	close(release)
	if res := <-done; res == nil || res.IsError {
		t.Fatalf("ensure_project after the store opened: %+v", res)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "resource://projects"})
	if err != nil || len(read.Contents) == 0 || !strings.Contains(read.Contents[0].Text, "pending") {
		t.Fatalf("resource://projects after the store opened: %+v, %v", read, err)
	}
}

// TestPendingDepsFailure: when the store does not open, a tool call and a
// resource read say why, in the words the process ends with.
func TestPendingDepsFailure(t *testing.T) {
	t.Parallel()
	cause := errors.New("MAILGATE_DB /nowhere/state.db: unable to open database file")
	cs := connectPending(t, []string{config.ToolsEmail, config.ToolsAgentMail}, func(context.Context) (Deps, error) { return Deps{}, cause })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := "mailgate could not start: " + cause.Error()
	if !res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want {
		t.Fatalf("tool call: %+v, want the error %q", res, want)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "resource://projects"}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("resource read: %v, want %q", err, want)
	}
}

// listedJSON is the tools as a client receives them: names, schemas and
// all.
func listedJSON(tools []*mcp.Tool) string {
	b, err := json.MarshalIndent(tools, "", " ")
	if err != nil {
		panic(err)
	}
	return string(b)
}
