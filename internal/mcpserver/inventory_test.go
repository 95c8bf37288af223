package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// allSets are the tool sets, in the order the snapshot lists them.
var allSets = []string{config.ToolsEmail, config.ToolsAgentMail, config.ToolsChannels, config.ToolsMailbox}

// setClient is a real client (protocol 2025-11-25) of a server with the one
// tool set: the email set without Gmail (listing and argument checks never
// reach it), the others on a fresh store.
func setClient(t *testing.T, set string) *mcp.ClientSession {
	t.Helper()
	if set != config.ToolsEmail {
		svc := compatService(t, amtest.SQLite(t), nil)
		return connectCompat(t, svc, []string{set}, SetOptions{ProjectKey: t.TempDir(), AgentName: "alice", Getenv: noTmux}).cs
	}
	srv, err := New(Deps{Version: "test", Tools: []string{set}, Email: &EmailDeps{}})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv)
}

// TestInventoryRows: every row of the inventory is complete and states its
// risk as one of the named levels (no hint is written by hand anywhere
// else, so a row is all there is to check).
func TestInventoryRows(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	svc := compatService(t, amtest.SQLite(t), nil)
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	cs := setClient(t, config.ToolsMailbox)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send",
		Arguments: map[string]any{"recipient": "bob", "message": strings.Repeat("x", 70000)}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("oversized send: %v, want a JSON-RPC invalid-params error", err)
	}
}

// bound is one limit a tool's input type declares (a maxItems or maxLength
// tag, see applyBounds).
type bound struct {
	prop  string
	kind  string // "maxItems", "maxLength" (a string's) or "itemMaxLength" (each list item's)
	limit int
}

func boundsOf(t reflect.Type) []bound {
	var out []bound
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, boundsOf(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v := f.Tag.Get("maxItems"); v != "" {
			n, _ := strconv.Atoi(v)
			out = append(out, bound{name, "maxItems", n})
		}
		if v := f.Tag.Get("maxLength"); v != "" {
			n, _ := strconv.Atoi(v)
			kind := "maxLength"
			if f.Type.Kind() == reflect.Slice {
				kind = "itemMaxLength"
			}
			out = append(out, bound{name, kind, n})
		}
	}
	return out
}

// TestBoundsAdvertisedAndEnforced: every limit an input type declares is
// in the schema a client lists, and is the limit the core enforces: one
// over it is refused, naming that limit ("the limit is N"). A new bound
// without a case here fails the test.
func TestBoundsAdvertisedAndEnforced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Valid arguments of every tool with a bound, to put one value over.
	base := map[string]func(id string) map[string]any{
		"agentmail/send_message": func(string) map[string]any {
			return map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b"}
		},
		"agentmail/reply_message": func(string) map[string]any {
			return map[string]any{"project_key": "/p/app", "sender_name": "BlueLake", "message_id": 1, "body_md": "b"}
		},
		"agentmail/file_reservation_paths": func(string) map[string]any {
			return map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"src/**"}}
		},
		"agentmail/macro_file_reservation_cycle": func(string) map[string]any {
			return map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"src/**"}}
		},
		"channels/send_message":    func(id string) map[string]any { return map[string]any{"agent_id": id, "subject": "s", "body": "b"} },
		"channels/claim_files":     func(id string) map[string]any { return map[string]any{"agent_id": id, "files": []string{"a.go"}} },
		"channels/release_files":   func(id string) map[string]any { return map[string]any{"agent_id": id, "files": []string{"a.go"}} },
		"channels/get_file_claims": func(string) map[string]any { return map[string]any{"files": []string{"a.go"}} },
		"channels/announce_change": func(id string) map[string]any {
			return map[string]any{"agent_id": id, "file_path": "a.go", "summary": "s"}
		},
		"mailbox/send": func(string) map[string]any { return map[string]any{"recipient": "bob", "message": "hi"} },
	}
	over := func(b bound) any {
		switch b.kind {
		case "maxItems":
			items := make([]string, b.limit+1)
			for i := range items {
				items[i] = fmt.Sprintf("f%d", i)
			}
			return items
		case "itemMaxLength":
			return []string{strings.Repeat("a", b.limit+1)}
		}
		return strings.Repeat("a", b.limit+1)
	}
	clients := map[string]*mcp.ClientSession{}
	agentID := ""
	for _, set := range []string{config.ToolsAgentMail, config.ToolsChannels, config.ToolsMailbox} {
		cs := setClient(t, set)
		clients[set] = cs
		call := func(tool string, args map[string]any) string {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", tool, err, res)
			}
			return res.Content[0].(*mcp.TextContent).Text
		}
		switch set {
		case config.ToolsAgentMail:
			call("ensure_project", map[string]any{"human_key": "/p/app"})
			for _, n := range []string{"GreenDog", "BlueLake"} {
				call("register_agent", map[string]any{"project_key": "/p/app", "name": n, "program": "test", "model": "m"})
			}
			call("send_message", base["agentmail/send_message"](""))
		case config.ToolsChannels:
			var r struct {
				AgentID string `json:"agent_id"`
			}
			json.Unmarshal([]byte(call("register", map[string]any{"name": "coder-1", "role": "coder"})), &r)
			agentID = r.AgentID
		}
	}
	listedTools := map[string]map[string]*mcp.Tool{} // by set, by name
	for _, e := range inventory {
		if e.Set == config.ToolsEmail {
			continue // go-sdk checks the email set's schemas itself (its limits: issue 19 item 2)
		}
		bounds := boundsOf(e.Handler.in)
		if len(bounds) == 0 {
			continue
		}
		cs := clients[e.Set]
		if listedTools[e.Set] == nil {
			// One tools/list per set, not one per bounded tool.
			listedTools[e.Set] = map[string]*mcp.Tool{}
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				listedTools[e.Set][tool.Name] = tool
			}
		}
		listed := listedTools[e.Set][e.Name]
		b, _ := json.Marshal(listed.InputSchema)
		var sch jsonschema.Schema
		if err := json.Unmarshal(b, &sch); err != nil {
			t.Fatal(err)
		}
		args, ok := base[e.Set+"/"+e.Name]
		if !ok {
			t.Errorf("%s/%s declares bounds %v: add its arguments to this test", e.Set, e.Name, bounds)
			continue
		}
		for _, bd := range bounds {
			p := sch.Properties[bd.prop]
			var got *int
			switch {
			case p == nil:
			case bd.kind == "maxItems":
				got = p.MaxItems
			case bd.kind == "maxLength":
				got = p.MaxLength
			case p.Items != nil:
				got = p.Items.MaxLength
			}
			if got == nil || *got != bd.limit {
				t.Errorf("%s/%s: %s %s is not advertised as %d: %s", e.Set, e.Name, bd.prop, bd.kind, bd.limit, b)
			}
			a := args(agentID)
			a[bd.prop] = over(bd)
			want := fmt.Sprintf("the limit is %d", bd.limit)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: e.Name, Arguments: a})
			var text string
			switch {
			case err != nil:
				text = err.Error() // the mailbox set's oversized message is a JSON-RPC error (FR-013)
			case res.IsError:
				text = res.Content[0].(*mcp.TextContent).Text
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s/%s with %s one over its %s: answered %q (err %v), want a refusal saying %q", e.Set, e.Name, bd.prop, bd.kind, text, err, want)
			}
		}
	}
}

// TestOnePlaceEach: answers are built only by toolcall.go's result builders,
// tools are registered only by toolcall.go (from the inventory), and
// annotations are written only by inventory.go (from a risk level), so a
// new tool cannot take a fifth way to answer or declare its risk by hand.
func TestOnePlaceEach(t *testing.T) {
	t.Parallel()
	only := map[string]string{ // what → the one file that may do it
		"mcp.CallToolResult{}":  "toolcall.go",
		"mcp.ToolAnnotations{}": "inventory.go",
		"AddTool()":             "toolcall.go",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var what string
			switch x := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := x.Type.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == "mcp" {
						what = "mcp." + sel.Sel.Name + "{}"
					}
				}
			case *ast.CallExpr:
				switch fn := x.Fun.(type) {
				case *ast.SelectorExpr:
					what = fn.Sel.Name + "()"
				case *ast.IndexExpr: // mcp.AddTool[In, Out] written out
					if sel, ok := fn.X.(*ast.SelectorExpr); ok {
						what = sel.Sel.Name + "()"
					}
				}
			}
			if want, ok := only[what]; ok && name != want {
				t.Errorf("%s: %s outside %s", fset.Position(n.Pos()), what, want)
			}
			return true
		})
	}
}
