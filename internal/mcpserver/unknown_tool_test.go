package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/mcpstdio"
)

// TestUnknownToolIsProtocolError: calling a tool that does not exist is a
// JSON-RPC -32602 error, not a recovered panic.
func TestUnknownToolIsProtocolError(t *testing.T) {
	s, err := New(Deps{Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}` + "\n"
	outR, outW := io.Pipe()
	go func() {
		s.Run(context.Background(), &mcpstdio.Transport{Reader: strings.NewReader(in), Writer: outW})
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || string(m.ID) != "2" {
			continue
		}
		if m.Error == nil || m.Error.Code != -32602 {
			t.Fatalf("unknown tool answered %s", sc.Text())
		}
		return
	}
	t.Fatal("no answer to the call of an unknown tool")
}
