package main

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/mcpserver"
)

// TestAgentMailEnvironment: TOOLS_FILTER_PROFILE and
// AGENT_NAME_ENFORCEMENT_MODE, set the way a client's configuration sets
// them (the server's environment), change what `mailgate serve` lists and
// how it treats names. In-process (serveHere): what the server answers is
// the subject, not the process.
func TestAgentMailEnvironment(t *testing.T) {
	parallel(t)
	tests := []struct {
		name, profile, mode string
		wantTools           []string // nil: the full set
		wantRefused         bool     // register_agent with a model's name
	}{
		{name: "defaults", wantRefused: false},
		{name: "minimal strict", profile: "minimal", mode: "strict", wantTools: mcpserver.AgentMailMinimalTools, wantRefused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			project := t.TempDir()
			env := []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir(), "MAILGATE_TOOLS=agentmail"}
			if tt.profile != "" {
				env = append(env, "TOOLS_FILTER_PROFILE="+tt.profile)
			}
			if tt.mode != "" {
				env = append(env, "AGENT_NAME_ENFORCEMENT_MODE="+tt.mode)
			}
			cs := serveHere(t, env, &testWriter{t: t}, "serve")
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			switch {
			case tt.wantTools == nil && len(names) < 24:
				t.Errorf("full profile lists %d tools: %v", len(names), names)
			case tt.wantTools != nil && !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(tt.wantTools))):
				t.Errorf("%s profile lists %v, want %v", tt.profile, names, tt.wantTools)
			}
			call := func(name string, args map[string]any) *mcp.CallToolResult {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			if res := call("ensure_project", map[string]any{"human_key": project}); res.IsError {
				t.Fatalf("ensure_project: %+v", res.Content)
			}
			res := call("register_agent", map[string]any{"project_key": project, "name": "gpt-5", "program": "test", "model": "x"})
			text := res.Content[0].(*mcp.TextContent).Text
			if res.IsError != tt.wantRefused {
				t.Errorf("register_agent(gpt-5): error=%v (%s), want error=%v", res.IsError, text, tt.wantRefused)
			}
			if !tt.wantRefused && !strings.Contains(text, "name_notice") {
				t.Errorf("coerce replaced the name without saying so: %s", text)
			}
		})
	}
}
