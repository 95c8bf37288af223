package mcpstdio

import (
	"bytes"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestEncodeLineAsEncodeMessage: the lines the transport writes are
// jsonrpc.EncodeMessage's bytes plus a newline, whichever path framed them.
func TestEncodeLineAsEncodeMessage(t *testing.T) {
	t.Parallel()
	intID, err := jsonrpc.MakeID(float64(42))
	if err != nil {
		t.Fatal(err)
	}
	strID, err := jsonrpc.MakeID(`a<b>&"c"é`)
	if err != nil {
		t.Fatal(err)
	}
	results := []string{
		`{}`,
		`{"content":[{"type":"text","text":"{\"id\":1,\"body\":\"<b>x</b> \\u0026 \\n y é\"}"}],"structuredContent":{"id":1,"body":"<b>x</b> & \n y é"}}`,
		`[1,2,3]`,
		`"just a string"`,
		`null`,
	}
	var msgs []jsonrpc.Message
	for _, id := range []jsonrpc.ID{intID, strID} {
		for _, r := range results {
			msgs = append(msgs, &jsonrpc.Response{ID: id, Result: []byte(r)})
		}
		msgs = append(msgs, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}})
		msgs = append(msgs, &jsonrpc.Response{ID: id, Error: errors.New("plain")})
		msgs = append(msgs, &jsonrpc.Request{ID: id, Method: "ping"})
	}
	msgs = append(msgs, &jsonrpc.Request{Method: "notifications/message", Params: []byte(`{"level":"info"}`)})
	for _, m := range msgs {
		want, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeLine(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("encodeLine\n got %s\nwant %s", got, want)
		}
	}
}
