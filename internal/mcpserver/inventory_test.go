package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
)

// allSets are the tool sets, in the order the snapshot lists them.
var allSets = []string{config.ToolsEmail, config.ToolsAgentMail, config.ToolsChannels, config.ToolsMailbox}

// setClient is a real client (protocol 2025-11-25) of a server with the one
// tool set: the email set without Gmail (listing and argument checks never
// reach it), the others on a fresh store.
func setClient(t *testing.T, set string) *mcp.ClientSession {
	t.Helper()
	d := Deps{Version: "test", Tools: []string{set}}
	if set == config.ToolsEmail {
		d.Email = &EmailDeps{}
	} else {
		d.AgentMail = compatService(t, filepath.Join(t.TempDir(), "s.db"), nil)
		d.Compat = CompatOptions{ProjectKey: t.TempDir(), AgentName: "alice", Getenv: noTmux}
	}
	srv, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv)
}

// TestToolsListSnapshot: what a client lists from each tool set (every
// tool with its title, description, annotations and schemas, and every
// resource template) is testdata/tools_list.golden.json. After a deliberate
// change: go test ./internal/mcpserver -run TestToolsListSnapshot -update
func TestToolsListSnapshot(t *testing.T) {
	ctx := context.Background()
	type listing struct {
		Tools     []*mcp.Tool             `json:"tools"`
		Resources []*mcp.ResourceTemplate `json:"resourceTemplates,omitempty"`
	}
	got := map[string]listing{}
	for _, set := range allSets {
		cs := setClient(t, set)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		l := listing{Tools: tools.Tools}
		if cs.InitializeResult().Capabilities.Resources != nil {
			res, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.Resources = res.ResourceTemplates
		}
		got[set] = l
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools_list.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run this test with -update to create it)", err)
	}
	if strings.TrimSpace(string(b)) != strings.TrimSpace(string(want)) {
		t.Errorf("tools/list changed; review the difference and run go test ./internal/mcpserver -run TestToolsListSnapshot -update\n%s", b)
	}
}
