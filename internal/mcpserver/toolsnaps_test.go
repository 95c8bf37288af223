package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestToolSnapshots: what a client lists of each tool (name, title,
// description, annotations, input and output schemas) is one file,
// testdata/toolsnaps/<set>/<tool>.json (a tool set per folder: agentmail's
// and channels' send_message differ), and each set's resource templates are
// testdata/toolsnaps/<set>/resource_templates.json, as github-mcp-server
// keeps its tools' snapshots. A change to one tool changes one file, which
// review reads on its own. After a deliberate change:
//
//	go test ./internal/mcpserver -run TestToolSnapshots -update
//
// rewrites every snapshot (and deletes those of tools that are gone).
func TestToolSnapshots(t *testing.T) {
	ctx := context.Background()
	for _, set := range allSets {
		dir := filepath.Join("testdata", "toolsnaps", set)
		want := map[string][]byte{} // file name → content
		cs := setClient(t, set)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			want[tool.Name+".json"] = snapJSON(t, tool)
		}
		if cs.InitializeResult().Capabilities.Resources != nil {
			res, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			want["resource_templates.json"] = snapJSON(t, res.ResourceTemplates)
		}
		if *update {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, b := range want {
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/mcpserver -run TestToolSnapshots -update to create the snapshots)", err)
		}
		var have []string
		for _, e := range entries {
			have = append(have, e.Name())
			if _, ok := want[e.Name()]; !ok {
				t.Errorf("%s/%s: no such tool in the %s set any more; run go test ./internal/mcpserver -run TestToolSnapshots -update", dir, e.Name(), set)
			}
		}
		for name, b := range want {
			if !slices.Contains(have, name) {
				t.Errorf("%s/%s: no snapshot of this tool; run go test ./internal/mcpserver -run TestToolSnapshots -update and review it", dir, name)
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(string(got)) != strings.TrimSpace(string(b)) {
				t.Errorf("%s/%s changed; review the difference and run go test ./internal/mcpserver -run TestToolSnapshots -update\n%s", dir, name, b)
			}
		}
	}
}

func snapJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
