package mcpstdio

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runStdio serves s over a Transport fed with input, returning every
// line the server wrote once it has stopped.
func runStdio(t *testing.T, s *mcp.Server, input string) []map[string]any {
	t.Helper()
	return runStdioEOF(t, s, input, nil)
}

// eofReader closes eof when its Reader first reports io.EOF: the transport
// has read the end of its input.
type eofReader struct {
	io.Reader
	once sync.Once
	eof  chan struct{}
}

func (r *eofReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}

// runStdioEOF is runStdio that closes eof (if not nil) once the transport
// has read the end of input.
func runStdioEOF(t *testing.T, s *mcp.Server, input string, eof chan struct{}) []map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	var in io.Reader = inR
	if eof != nil {
		in = &eofReader{Reader: inR, eof: eof}
	}
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.Run(context.Background(), &Transport{Reader: in, Writer: outW, DrainTimeout: 5 * time.Second})
		outW.Close()
	}()
	go func() {
		io.WriteString(inW, input)
		inW.Close() // EOF right after the last request
	}()
	var lines []map[string]any
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("server wrote a line that is not JSON: %q", sc.Text())
		}
		lines = append(lines, m)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop after EOF")
	}
	return lines
}

func byID(lines []map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, l := range lines {
		b, _ := json.Marshal(l["id"])
		out[string(b)] = l
	}
	return out
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

func TestStdioMalformedLinesAnsweredAndSessionGoesOn(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantID   string // JSON of the id in the error answer
		wantCode float64
	}{
		{"broken JSON", `{"jsonrpc":"2.0","id":2,"method":"ping"`, "null", -32700},
		{"not JSON at all", `hello world`, "null", -32700},
		{"missing version", `{"id":7,"method":"ping"}`, "7", -32600},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, "null", -32600},
		{"id without method", `{"jsonrpc":"2.0","id":9}`, "9", -32600},
		{"string id without method", `{"jsonrpc":"2.0","id":"x","params":{}}`, `"x"`, -32600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
			lines := runStdio(t, s, initLine+tt.line+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
			got := byID(lines)
			errLine, ok := got[tt.wantID]
			if !ok {
				t.Fatalf("no answer with id %s to the bad line; got %v", tt.wantID, lines)
			}
			e, _ := errLine["error"].(map[string]any)
			if e == nil || e["code"] != tt.wantCode {
				t.Fatalf("answer = %v, want error code %v", errLine, tt.wantCode)
			}
			if pong, ok := got["3"]; !ok || pong["error"] != nil {
				t.Fatalf("ping after the bad line not answered: %v", lines)
			}
		})
	}
}

func TestStdioEOFWaitsForInFlightReplies(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	// The call answers only once the transport has read EOF (no sleep, and
	// the reply is certainly still in flight at EOF).
	eof := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-eof:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	lines := runStdioEOF(t, s, initLine+`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`+"\n", eof)
	res, ok := byID(lines)["2"]
	if !ok {
		t.Fatalf("the reply in flight at EOF was dropped: %v", lines)
	}
	if !strings.Contains(mustJSON(res), `"done"`) {
		t.Fatalf("reply = %v", res)
	}
}

func TestStdioOversizedLine(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		s.Run(context.Background(), &Transport{Reader: inR, Writer: outW, MaxLineLength: 1024})
		outW.Close()
	}()
	go func() {
		io.WriteString(inW, initLine+`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"`+strings.Repeat("a", 5000)+`"}}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
		inW.Close()
	}()
	var lines []map[string]any
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		var m map[string]any
		json.Unmarshal(sc.Bytes(), &m)
		lines = append(lines, m)
	}
	got := byID(lines)
	if e, _ := got["null"]["error"].(map[string]any); e == nil || e["code"] != float64(-32700) {
		t.Fatalf("oversized line not refused with -32700: %v", lines)
	}
	if _, ok := got["3"]; !ok {
		t.Fatalf("stream lost sync after an oversized line: %v", lines)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
