package httpserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPRequestWithoutMethod: a JSON-RPC object with an id and no method
// (nor result or error) is answered with -32600 and its id, on a session
// and without one, instead of go-sdk's silent 202.
func TestHTTPRequestWithoutMethod(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{})
	code, hdr, _ := rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders(""))
	if code != 200 {
		t.Fatalf("initialize: %d", code)
	}
	sid := hdr.Get("Mcp-Session-Id")
	for _, h := range []map[string]string{with(mcpHeaders(""), "Mcp-Session-Id", sid), mcpHeaders("")} {
		code, _, body := rawRequest(t, "POST", srv.base+"/mcp/", `{"jsonrpc":"2.0","id":42}`, h)
		if code != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, `"id":42`) {
			t.Fatalf("id without method: %d %s", code, body)
		}
	}
	// A client's response to a server request (result, no method) still goes through.
	code, _, body := rawRequest(t, "POST", srv.base+"/mcp/", `{"jsonrpc":"2.0","id":42,"result":{}}`, with(mcpHeaders(""), "Mcp-Session-Id", sid))
	if code != http.StatusAccepted {
		t.Fatalf("a response: %d %s", code, body)
	}
}
