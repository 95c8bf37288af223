package httpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzAuthorize: whatever body an agent sends, a tools/call that the roles
// let through, read as go-sdk reads the message and as the tool decodes
// its arguments (encoding/json: keys matched without regard to case, the
// last duplicate winning), names only the token's project.
func FuzzAuthorize(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_inbox","arguments":{"project_key":"/srv/backend"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_inbox","arguments":{"project_key":"/srv/backend","PROJECT_KEY":"/srv/app"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"project_key":"backend","to":["A@app"]}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch_inbox","arguments":{"project_key":"app"}}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"resource://inbox/A?project=app"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_inbox","arguments":{"project_key":"/srv/backend/../app"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"fetch_inbox","arguments":{"project_key":"app"}}}`,
	} {
		f.Add([]byte(seed))
	}
	h := &Handler{opts: Options{Tools: roleTools, ProjectKey: testProjects}}
	p := &Principal{Role: RoleAgent, Projects: []string{"/srv/backend"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		why, _ := h.authorize(context.Background(), p, body)
		if why != "" {
			return
		}
		var msgs []json.RawMessage
		if json.Unmarshal(body, &msgs) != nil {
			msgs = []json.RawMessage{body}
		}
		for _, raw := range msgs {
			// The envelope and params as go-sdk reads them (exact keys),
			// the arguments as the tool's decoder does (encoding/json).
			msg, err := jsonrpc.DecodeMessage(raw)
			req, ok := msg.(*jsonrpc.Request)
			if err != nil || !ok || req.Method != "tools/call" {
				continue
			}
			var params map[string]json.RawMessage
			var name string
			if json.Unmarshal(req.Params, &params) != nil || json.Unmarshal(params["name"], &name) != nil {
				continue
			}
			var args struct {
				ProjectKey string `json:"project_key"`
			}
			json.Unmarshal(params["arguments"], &args)
			rule, ok := roleTools[name]
			if !ok || len(rule.ProjectArgs) == 0 || args.ProjectKey == "" {
				continue
			}
			if got, err := testProjects(context.Background(), args.ProjectKey); err != nil || got != "/srv/backend" {
				t.Fatalf("allowed %s with project_key %q (%q, %v)", name, args.ProjectKey, got, err)
			}
		}
	})
}
