package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	if set != config.ToolsEmail {
		svc := compatService(t, filepath.Join(t.TempDir(), "s.db"), nil)
		return connectCompat(t, svc, []string{set}, CompatOptions{ProjectKey: t.TempDir(), AgentName: "alice", Getenv: noTmux}).cs
	}
	srv, err := New(Deps{Version: "test", Tools: []string{set}, Email: &EmailDeps{}})
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

// TestInventoryRows: every row of the inventory is complete and states its
// risk as one of the named levels (no hint is written by hand anywhere
// else, so a row is all there is to check).
func TestInventoryRows(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range inventory {
		key := e.Set + "/" + e.Name
		if seen[key] {
			t.Errorf("%s: listed twice", key)
		}
		seen[key] = true
		if _, ok := toolSets[e.Set]; !ok {
			t.Errorf("%s: unknown tool set", key)
		}
		if e.Title == "" || e.Description == "" {
			t.Errorf("%s: needs a title and a description", key)
		}
		if e.Risk < RiskReadOnly || e.Risk > RiskSends {
			t.Errorf("%s: risk %d is not a named level", key, e.Risk)
		}
		if e.Risk == RiskReadOnly && e.Idempotent {
			t.Errorf("%s: Idempotent is implied by RiskReadOnly: drop it", key)
		}
		if e.Minimal && e.Set != config.ToolsAgentMail {
			t.Errorf("%s: only the agentmail set has a minimal profile", key)
		}
		if e.Handler.add == nil || e.Handler.in == nil {
			t.Errorf("%s: no handler", key)
		}
	}
	for _, r := range resources {
		if r.Name == "" || r.Title == "" || r.Description == "" || r.URITemplate == "" {
			t.Errorf("resource %q: needs a name, title, description and URI template", r.Name)
		}
	}
}

// TestToolsDeclareTheirRisk: what a client lists of every set is exactly
// the inventory's rows, each with its title (as title and as the
// annotation), a description, an object input schema and all four hints,
// explicit and matching its risk: read-only is read-only and idempotent,
// destructive and sending tools say destructiveHint, and only the email set
// (Gmail) is open-world.
func TestToolsDeclareTheirRisk(t *testing.T) {
	for _, set := range allSets {
		t.Run(set, func(t *testing.T) {
			cs := setClient(t, set)
			listed := map[string]*mcp.Tool{}
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed[tool.Name] = tool
			}
			for _, e := range inventory {
				if e.Set != set {
					continue
				}
				tool, ok := listed[e.Name]
				if !ok {
					t.Errorf("%s: in the inventory, not listed", e.Name)
					continue
				}
				delete(listed, e.Name)
				a := tool.Annotations
				switch {
				case tool.Title != e.Title || tool.Description != e.Description:
					t.Errorf("%s: listed with title %q and description %q, not the inventory's", e.Name, tool.Title, tool.Description)
				case a == nil || a.Title != e.Title:
					t.Errorf("%s: annotations %+v do not carry the title", e.Name, a)
				case a.DestructiveHint == nil || a.OpenWorldHint == nil:
					t.Errorf("%s: destructiveHint/openWorldHint left to the client's default (true)", e.Name)
				case a.ReadOnlyHint != (e.Risk == RiskReadOnly),
					*a.DestructiveHint != (e.Risk == RiskDestructive || e.Risk == RiskSends),
					a.ReadOnlyHint && !a.IdempotentHint,
					a.IdempotentHint != (e.Risk == RiskReadOnly || e.Idempotent),
					*a.OpenWorldHint != (set == config.ToolsEmail):
					t.Errorf("%s: annotations %+v do not declare its risk (%s)", e.Name, *a, e.Risk)
				}
				var in struct {
					Type       string         `json:"type"`
					Properties map[string]any `json:"properties"`
				}
				b, _ := json.Marshal(tool.InputSchema)
				if err := json.Unmarshal(b, &in); err != nil || in.Type != "object" {
					t.Errorf("%s: input schema %s is not an object schema", e.Name, b)
				}
			}
			for name := range listed {
				t.Errorf("%s: listed but not in the inventory", name)
			}
			if set == config.ToolsAgentMail {
				var templates []string
				for rt, err := range cs.ResourceTemplates(context.Background(), nil) {
					if err != nil {
						t.Fatal(err)
					}
					templates = append(templates, rt.URITemplate)
					if rt.Title == "" || rt.Description == "" {
						t.Errorf("resource %s: no title or description", rt.Name)
					}
				}
				for _, r := range resources {
					if r.Set == set && !slices.Contains(templates, r.URITemplate) {
						t.Errorf("resource %s: in the inventory, not listed", r.URITemplate)
					}
				}
			}
		})
	}
}

// TestMinimalProfileFromInventory: TOOLS_FILTER_PROFILE=minimal lists
// exactly the rows marked Minimal.
func TestMinimalProfileFromInventory(t *testing.T) {
	svc := compatService(t, filepath.Join(t.TempDir(), "s.db"), nil)
	srv, err := New(Deps{Version: "test", Tools: []string{config.ToolsAgentMail}, AgentMail: svc, AgentMailProfile: "minimal"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := connect(t, srv).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range res.Tools {
		got = append(got, tool.Name)
	}
	want := slices.Clone(AgentMailMinimalTools)
	slices.Sort(got)
	slices.Sort(want)
	if len(want) != 6 || !slices.Equal(got, want) {
		t.Fatalf("minimal profile lists %v, want the 6 rows marked Minimal %v", got, want)
	}
}

// TestMalformedArgumentsAreToolErrors: arguments that are not a JSON
// object, and a required argument of the wrong type, are answered the same
// way by every tool of every set: a tool error (isError) with one text
// content that says what is wrong, never a protocol error. (The mailbox
// set answered malformed arguments with a JSON-RPC error until the
// inventory gave every set one call path.)
func TestMalformedArgumentsAreToolErrors(t *testing.T) {
	for _, set := range allSets {
		t.Run(set, func(t *testing.T) {
			cs := setClient(t, set)
			for _, e := range inventory {
				if e.Set != set {
					continue
				}
				for _, args := range []any{[]any{1, 2}, "text", 42} {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: e.Name, Arguments: args})
					if err != nil {
						t.Errorf("%s(%v): protocol error %v, want a tool error", e.Name, args, err)
						continue
					}
					if !res.IsError || len(res.Content) != 1 {
						t.Errorf("%s(%v): isError %v with %d contents, want one tool error", e.Name, args, res.IsError, len(res.Content))
						continue
					}
					if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "unmarshal") {
						t.Errorf("%s(%v): %q does not say the arguments could not be read", e.Name, args, text)
					}
				}
			}
		})
	}
}

// TestOutputSchemaIsTheAnswers: the output schema a tool advertises is the
// schema of its own answer. The agentmail and channels sets both have a
// send_message; their output schemas were generated under one key, and
// agentmail's send_message advertised channels' {message_id}, which a
// client that validates structuredContent (the TypeScript SDK) refuses.
func TestOutputSchemaIsTheAnswers(t *testing.T) {
	h := newAMHarness(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	var schema any
	for tool, err := range h.cs.Tools(h.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "send_message" {
			schema = tool.OutputSchema
		}
	}
	b, _ := json.Marshal(schema)
	var sch jsonschema.Schema
	if err := json.Unmarshal(b, &sch); err != nil {
		t.Fatal(err)
	}
	resolved, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{
		"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b"}})
	if err != nil || res.IsError {
		t.Fatalf("send_message: %v %+v", err, res)
	}
	var answer any
	sb, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(sb, &answer)
	if err := resolved.Validate(answer); err != nil {
		t.Fatalf("send_message's answer does not match its advertised output schema: %v\nschema %s\nanswer %s", err, b, sb)
	}
}

// TestProtocolErrorsStayWhereContractsWantThem: the one tool answer that
// is a JSON-RPC error by contract (the mailbox set's oversized message,
// FR-013) still is, through the shared call path.
func TestProtocolErrorsStayWhereContractsWantThem(t *testing.T) {
	cs := setClient(t, config.ToolsMailbox)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send",
		Arguments: map[string]any{"recipient": "bob", "message": strings.Repeat("x", 70000)}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("oversized send: %v, want a JSON-RPC invalid-params error", err)
	}
}
