package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool registered through a stand-in schema (advertise.go) is listed with
// its own schemas, and one whose input schema has a header annotation is
// given to go-sdk as it is (go-sdk reads the annotations at each HTTP call).
func TestAdvertisedSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "mailgate", Version: "test"}, nil)
	adv := newAdvertised()
	s.AddReceivingMiddleware(adv.listTools)
	// Keys in order: the client decodes the schemas into maps.
	own := map[string][2]string{
		"plain":     {`{"properties":{"to":{"type":"string"}},"required":["to"],"type":"object"}`, `{"properties":{"id":{"type":"string"}},"type":"object"}`},
		"annotated": {`{"properties":{"region":{"type":"string","x-mcp-header":"Region"}},"type":"object"}`, ""},
	}
	for name, sc := range own {
		tool := &mcp.Tool{Name: name, InputSchema: json.RawMessage(sc[0])}
		if sc[1] != "" {
			tool.OutputSchema = json.RawMessage(sc[1])
		}
		adv.addTool(s, tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("ok"), nil
		})
	}
	if _, ok := adv.schemas["annotated"]; ok {
		t.Error("a schema with a header annotation went to go-sdk as a stand-in")
	}
	if _, ok := adv.schemas["plain"]; !ok {
		t.Error("a generated schema without header annotations went to go-sdk whole")
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(own) {
		t.Fatalf("listed %d tools, want %d", len(res.Tools), len(own))
	}
	for _, tool := range res.Tools {
		in, _ := json.Marshal(tool.InputSchema)
		out := []byte{}
		if tool.OutputSchema != nil {
			out, _ = json.Marshal(tool.OutputSchema)
		}
		if want := own[tool.Name]; string(in) != want[0] || string(out) != want[1] {
			t.Errorf("%s listed with input schema %s and output schema %s, want %s and %s", tool.Name, in, out, want[0], want[1])
		}
	}
}

// TestStandInSchemaNotEncodable: the stand-in cannot be encoded (so go-sdk's
// look for header annotations stops there, finding none), and it is still
// the object schema AddTool checks for.
func TestStandInSchemaNotEncodable(t *testing.T) {
	t.Parallel()
	if b, err := json.Marshal(standInSchema); err == nil {
		t.Errorf("the stand-in schema encodes (%s): go-sdk decodes it again at each AddTool and HTTP tools/call", b)
	}
	if standInSchema.Type != "object" {
		t.Errorf("the stand-in's type is %q: go-sdk's AddTool takes object schemas only", standInSchema.Type)
	}
}
