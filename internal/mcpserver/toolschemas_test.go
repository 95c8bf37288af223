package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// allRawSets are the tool sets whose schemas come from toolschemas.json:
// every set.
var allRawSets = []string{config.ToolsEmail, config.ToolsAgentMail, config.ToolsChannels, config.ToolsMailbox}

// inferredSchemas builds a server with every raw tool set while inferring
// every schema (as go-sdk's jsonschema would), and returns them by key.
func inferredSchemas(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	reflectSchemas = true
	got := map[string]json.RawMessage{}
	schemaBuilt = func(key string, schema any) {
		b, err := json.Marshal(schema)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		got[key] = b
	}
	defer func() { reflectSchemas, schemaBuilt = false, func(string, any) {} }()
	svc := compatService(t, amtest.SQLite(t), nil)
	if _, err := New(Deps{Version: "test", Tools: allRawSets, Email: &EmailDeps{}, AgentMail: svc, SetStores: setStores(t, svc), SetOptions: SetOptions{ProjectKey: t.TempDir(), Getenv: noTmux}}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestToolSchemasGenerated: toolschemas.json holds exactly the schemas that
// inference gives for today's argument and answer types. After changing a
// tool's types: go test ./internal/mcpserver -run TestToolSchemasGenerated -update
func TestToolSchemasGenerated(t *testing.T) {
	got := inferredSchemas(t)
	if *update {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b bytes.Buffer
		b.WriteString("{\n")
		for i, k := range keys {
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(": ")
			b.Write(got[k])
			if i < len(keys)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("}\n")
		if err := os.WriteFile("toolschemas.json", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := toolSchemas()
	for k, g := range got {
		var c bytes.Buffer
		if w, ok := want[k]; !ok {
			t.Errorf("%s: missing from toolschemas.json (run this test with -update)", k)
		} else if json.Compact(&c, w); !bytes.Equal(c.Bytes(), g) {
			t.Errorf("%s: toolschemas.json has\n%s\ninference gives\n%s\n(run this test with -update)", k, c.Bytes(), g)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: in toolschemas.json but no tool has it (run this test with -update)", k)
		}
	}
}

// TestToolsListSameWithGeneratedSchemas: a client lists the same tools,
// schemas included, from a server built on the generated schemas as from
// one that infers them.
func TestToolsListSameWithGeneratedSchemas(t *testing.T) {
	list := func(reflect bool) []byte {
		reflectSchemas = reflect
		defer func() { reflectSchemas = false }()
		svc := compatService(t, amtest.SQLite(t), nil)
		srv, err := New(Deps{Version: "test", Tools: allRawSets, Email: &EmailDeps{}, AgentMail: svc, SetStores: setStores(t, svc), SetOptions: SetOptions{ProjectKey: "/p", Getenv: noTmux}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := connect(t, srv).ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) < 30 {
			t.Fatalf("only %d tools listed", len(res.Tools))
		}
		b, err := json.Marshal(res.Tools)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	generated, inferred := list(false), list(true)
	if !bytes.Equal(generated, inferred) {
		t.Fatalf("tools/list differs:\ngenerated %s\ninferred  %s", generated, inferred)
	}
}
