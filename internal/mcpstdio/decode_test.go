package mcpstdio

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeCases are lines a peer may send: the calls a client makes, and
// what decodeLine must leave to go-sdk (responses, errors, junk).
var decodeCases = []struct {
	line string
	fast bool // decoded by decodeRequest, not by go-sdk
}{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":{"project_key":"/p","to":["GreenCastle"],"subject":"status 1","body_md":"Build is green; \"moving\" on.\n\u00e9"}}}` + "\n", true},
	{`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n", true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}} `, true},
	{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":null,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"x","result":{},"error":{"code":1,"message":"m"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"x","id":2}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"caf\u00e9 \\ \"q\""}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":""}`, true},
	{`{"jsonrpc":"2.0","id":1,"METHOD":"x"}`, false},
	{`{"JSONRPC":"2.0","id":1,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","error":"text"}`, false},
	{`{"jsonrpc":"1.0","id":1,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":true,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":{},"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":7}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":null}`, true}, // go-sdk too: a request with method ""
	{`{"jsonrpc":"2.0","id":1,"method":"x"} {"jsonrpc":"2.0","id":2,"method":"y"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x"}junk`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"[[[["}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"x"`, false},
	{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, false},
	{`not json`, false},
	{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"s\":\"\xff\"}}", true},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\xff"}}`, false},
	{`{}`, false},
}

// TestDecodeLineAsDecodeMessage: decodeLine gives what
// jsonrpc.DecodeMessage gives (the same message, or the same error), and
// takes its own path for the requests a client sends.
func TestDecodeLineAsDecodeMessage(t *testing.T) {
	t.Parallel()
	for _, c := range decodeCases {
		checkDecodeLine(t, []byte(c.line))
		if _, fast := decodeRequest([]byte(c.line)); fast != c.fast {
			t.Errorf("decodeRequest(%.80q) took its own path: %v, want %v", c.line, fast, c.fast)
		}
	}
}

func checkDecodeLine(t *testing.T, line []byte) {
	t.Helper()
	want, wantErr := jsonrpc.DecodeMessage(line)
	got, gotErr := decodeLine(line)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("decodeLine(%.200q): error %v, DecodeMessage: %v", line, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeLine(%.200q) = %#v, DecodeMessage = %#v", line, got, want)
	}
}

func FuzzDecodeLine(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecodeLine(t, line)
	})
}
