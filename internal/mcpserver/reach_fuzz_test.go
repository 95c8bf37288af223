package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// fuzzTarget is one tool and the string arguments a fuzzer may set.
type fuzzTarget struct {
	name   string
	cs     *mcp.ClientSession
	props  []string        // string or string-list properties, sorted
	arrays map[string]bool // the list ones
	base   map[string]any  // valid arguments the fuzzed one replaces
}

// fuzzTargets lists every tool of the four sets with its string
// arguments, read from the schema each server advertises.
func fuzzTargets(t testing.TB, r *reachEnv) []fuzzTarget {
	t.Helper()
	ch := connectCompat(t, compatService(t, amtest.SQLite(t), nil),
		[]string{config.ToolsChannels, config.ToolsMailbox}, SetOptions{ProjectKey: r.w.project, AgentName: "alice", Getenv: noTmux}).cs
	base := map[string]map[string]any{}
	for name, call := range r.pathCalls() {
		base[name] = call("ok.txt")
	}
	for name, tries := range r.gmailCalls() {
		if _, ok := base[name]; !ok {
			base[name] = tries[0]
		}
	}
	base["get_attachment"] = map[string]any{"message_id": r.message, "attachment_id": "part:1", "save": true}
	base["read_email"] = map[string]any{"message_id": r.message}
	var out []fuzzTarget
	for _, cs := range []*mcp.ClientSession{r.e.cs, r.am.cs, ch} {
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			ft := fuzzTarget{name: tool.Name, cs: cs, arrays: map[string]bool{}, base: base[tool.Name]}
			var s jsonschema.Schema
			b, _ := json.Marshal(tool.InputSchema)
			if err := s.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
			for p, ps := range s.Properties {
				switch {
				case ps.Type == "string" || slices.Contains(ps.Types, "string"):
					ft.props = append(ft.props, p)
				case (ps.Type == "array" || slices.Contains(ps.Types, "array")) && ps.Items != nil &&
					(ps.Items.Type == "string" || slices.Contains(ps.Items.Types, "string")):
					ft.props = append(ft.props, p)
					ft.arrays[p] = true
				}
			}
			slices.Sort(ft.props)
			if len(ft.props) > 0 {
				out = append(out, ft)
			}
		}
	}
	slices.SortFunc(out, func(a, b fuzzTarget) int { return strings.Compare(a.name, b.name) })
	return out
}

// FuzzReach sets any string argument of any tool to any text, through the
// protocol, and checks what the inventory declares: no canary (the OAuth
// token, credentials, a vault file, a file outside) ever shows in an
// answer, no file outside the roots a tool may write appears or changes,
// and Gmail never sees a send, trash or delete (nothing is approved here,
// and every such change is gated).
func FuzzReach(f *testing.F) {
	r := newReachEnv(f)
	targets := fuzzTargets(f, r)
	// Seeds: every string argument of every tool once, with a hostile
	// path (a different one each time), and every hostile path on the two
	// attachment arguments.
	hostile := r.w.hostilePaths(r.w.attachments)
	for i, tg := range targets {
		for j, prop := range tg.props {
			switch {
			case tg.name == "send_message" && prop == "attachment_paths":
				for _, p := range r.w.hostilePaths(r.w.project) {
					f.Add(uint8(i), uint8(j), p)
				}
			case tg.name == "send_email" && prop == "attachments":
				for _, p := range hostile {
					f.Add(uint8(i), uint8(j), p)
				}
			case prop == "add_labels" || prop == "remove_labels":
				f.Add(uint8(i), uint8(j), "TRASH")
				f.Add(uint8(i), uint8(j), "spam")
			default:
				f.Add(uint8(i), uint8(j), hostile[(i+j)%len(hostile)])
			}
		}
	}
	before := r.w.snapshot(f)
	gated := r.gatedChanges(f)
	f.Fuzz(func(t *testing.T, ti, pi uint8, v string) {
		tg := targets[int(ti)%len(targets)]
		prop := tg.props[int(pi)%len(tg.props)]
		args := map[string]any{}
		for k, x := range tg.base {
			args[k] = x
		}
		if tg.arrays[prop] {
			args[prop] = []any{v}
		} else {
			args[prop] = v
		}
		res, err := tg.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tg.name, Arguments: args})
		if err == nil {
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok && r.w.leaked(tc.Text) {
					t.Fatalf("%s %s=%q: a canary in the answer: %q", tg.name, prop, v, tc.Text)
				}
			}
		}
		if n := r.gatedChanges(t); n != gated {
			t.Fatalf("%s %s=%q: %d gated Gmail changes without an approval", tg.name, prop, v, n-gated)
		}
		r.w.checkFiles(t, before)
	})
}
