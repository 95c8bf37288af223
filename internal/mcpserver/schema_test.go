package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// TestNoBooleanSubschemas: every property and item schema of every tool is an
// object. jsonschema-go infers `true` for `any` fields, and the TypeScript
// SDK's tools/list validation rejects it, which breaks every client built on
// that SDK (and the conformance suite's tools-list).
func TestNoBooleanSubschemas(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		for kind, sch := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, _ := json.Marshal(sch)
			var v any
			json.Unmarshal(b, &v)
			if path := findBooleanSubschema(v, ""); path != "" {
				t.Errorf("%s %s schema: boolean subschema at %s", tool.Name, kind, path)
			}
		}
	}
}

func findBooleanSubschema(v any, path string) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k, p := range props {
			if _, isBool := p.(bool); isBool {
				return path + "/properties/" + k
			}
			if found := findBooleanSubschema(p, path+"/properties/"+k); found != "" {
				return found
			}
		}
	}
	if items, ok := m["items"]; ok {
		if _, isBool := items.(bool); isBool {
			return path + "/items"
		}
		return findBooleanSubschema(items, fmt.Sprint(path, "/items"))
	}
	return ""
}
