package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestEncodedResultAsGoSDK: an answer wrapped by encodeOnce encodes to the
// bytes go-sdk's own encoding gives, for every shape of answer the sets
// build and the shapes it leaves to go-sdk.
func TestEncodedResultAsGoSDK(t *testing.T) {
	t.Parallel()
	answer, err := jsonResult(map[string]any{"body": "<b>a & b</b>\n\"q\" é \u2028", "n": 3, "list": []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := jsonResult([]string{"a", "<b>"}) // structuredContent {"result": …}, not raw
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]*mcp.CallToolResult{
		"json answer": answer,
		"list answer": list,
		"text":        textResult("Message #12 sent <to> BlueLake & co"),
		"error":       errorResult("body_md is required: send_message needs …"),
		"empty text":  textResult(""),
		"sentence":    sentenceResult("Message #3 sent", map[string]int{"id": 3}),
		"meta and more": {Meta: mcp.Meta{"k": "<v>", "content": nil}, IsError: true, RequestState: "s<1>",
			Content:           []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two", Annotations: &mcp.Annotations{Priority: 0.5}}},
			StructuredContent: json.RawMessage(`{"a":"\u003cx\u003e"}`)},
		"empty raw":    {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(nil)},
		"no content":   {StructuredContent: json.RawMessage(`{}`)},
		"image":        {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}},
		"empty result": {},
	}
	for name, r := range results {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(encodedResult{r})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestEncodeOnceOnTheWire: a tools/call answer is the same bytes on the
// wire with encodeOnce as without, on the protocol versions whose results
// go-sdk annotates after the handlers (2026-07-28: resultType and the
// server's _meta) and on the one clients use most.
func TestEncodeOnceOnTheWire(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		var lines [2]string
		for i, wrap := range []bool{false, true} {
			lines[i] = callToolLine(t, version, wrap)
		}
		if version == "2026-07-28" && !strings.Contains(lines[1], `"resultType":"complete"`) {
			t.Errorf("%s: the answer has no resultType: the comparison missed what go-sdk adds after the handler: %s", version, lines[1])
		}
		if lines[0] == "" || lines[0] != lines[1] {
			t.Errorf("%s: answer\nwith encodeOnce    %s\nwithout encodeOnce %s", version, lines[1], lines[0])
		}
	}
}

// callToolLine is the JSON-RPC line a server writes answering one
// tools/call, with or without encodeOnce.
func callToolLine(t *testing.T, version string, wrap bool) string {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "mailgate", Version: "test"}, nil)
	if wrap {
		s.AddReceivingMiddleware(encodeOnce)
	}
	s.AddTool(&mcp.Tool{Name: "answer", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return jsonResult(map[string]any{"body": "<b>x</b> & \"y\"\n", "id": 7})
		})
	st, ct := mcp.NewInMemoryTransports()
	var log testutil.Buffer
	ss, err := s.Connect(ctx, &mcp.LoggingTransport{Transport: st, Writer: &log}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "answer"})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", version, err, res)
	}
	// The transport logs a line after it has written it: the client may
	// have its answer first.
	line := ""
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, l := range strings.Split(log.String(), "\n") {
			if strings.HasPrefix(l, "write: ") && strings.Contains(l, `"structuredContent"`) {
				line = l
				return nil
			}
		}
		return fmt.Errorf("%s: no answer in the server's log:\n%s", version, log.String())
	})
	return line
}

// TestJSONResultWrapsNonObjects: an answer that is not a JSON object is
// {"result": …} in structuredContent, the bytes json.Marshal gives the map
// it used to be.
func TestJSONResultWrapsNonObjects(t *testing.T) {
	t.Parallel()
	for _, v := range []any{[]string{"a", "<b> & c"}, 3, "text", nil, []map[string]any{{"id": 1, "body": "é\n"}}} {
		res, err := jsonResult(v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		want, _ := json.Marshal(map[string]json.RawMessage{"result": b})
		got, ok := res.StructuredContent.(json.RawMessage)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%v: structuredContent %s, want %s", v, got, want)
		}
	}
}
