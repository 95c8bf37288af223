package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool's answer is JSON twice over: its text (the JSON of the answer, as
// the reference servers send it and as clients that ignore
// structuredContent read it; every protocol version up to 2026-07-28 asks
// for it) and its structuredContent. go-sdk's CallToolResult.MarshalJSON
// encodes it with encoding/json, which validates and copies every
// json.RawMessage and every nested Marshaler's output again, and go-sdk
// then does so once more for the whole result and once more for the
// JSON-RPC message: the answer's bytes went through encoding/json's
// compaction three times, 9% of the HTTP server's CPU under load
// (BENCHMARKS.md). encodedResult builds the result from parts that are
// already compact JSON, which saves the first of those passes; the two
// others are go-sdk's own.

// encodeOnce wraps the answers of tools/call in encodedResult. It must be
// inside every middleware that looks at the *mcp.CallToolResult (logCalls
// sees through it: toolResult).
func encodeOnce(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && err == nil {
			return encodedResult{r}, nil
		}
		return res, err
	}
}

// toolResult is res's *mcp.CallToolResult, wrapped or not.
func toolResult(res mcp.Result) *mcp.CallToolResult {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r
	case encodedResult:
		return r.CallToolResult
	}
	return nil
}

// encodedResult is a CallToolResult that encodes its text contents and its
// structuredContent (when it is already JSON) without re-validating them.
// Everything else, and every other shape, is go-sdk's own encoding; the
// bytes are the same as go-sdk's (TestEncodedResultAsGoSDK).
type encodedResult struct{ *mcp.CallToolResult }

func (r encodedResult) MarshalJSON() ([]byte, error) {
	res := r.CallToolResult
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if (res.StructuredContent != nil && (!isRaw || len(raw) == 0)) || res.InputRequests != nil || len(res.Content) == 0 {
		return res.MarshalJSON()
	}
	texts := make([]*mcp.TextContent, len(res.Content))
	for i, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok || tc == nil {
			return res.MarshalJSON()
		}
		texts[i] = tc
	}
	// The fields other than _meta, content and structuredContent (isError,
	// requestState and go-sdk's unexported result type) as go-sdk writes
	// them, after `{"content":null`.
	rest := *res
	rest.Meta, rest.Content, rest.StructuredContent = nil, nil, nil
	tail, err := rest.MarshalJSON()
	const head = `{"content":null`
	if err != nil || !bytes.HasPrefix(tail, []byte(head)) {
		return res.MarshalJSON()
	}
	tail = tail[len(head):]
	out := make([]byte, 0, 64+2*len(raw)+len(tail))
	out = append(out, '{')
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(res.Meta)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, `"_meta":`...), meta...), ',')
	}
	out = append(out, `"content":[`...)
	for i, tc := range texts {
		b, err := tc.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	out = append(out, ']')
	if isRaw {
		out = append(append(out, `,"structuredContent":`...), raw...)
	}
	return append(out, tail...), nil
}
