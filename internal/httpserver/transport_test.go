package httpserver

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPGoClients calls a tool through go-sdk's own clients on every
// endpoint and transport, with the bearer token on each request.
func TestHTTPGoClients(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{BearerToken: testToken})
	hc := bearerClient(testToken)
	tests := []struct {
		name, path, version string
		sse                 bool
	}{
		{name: "streamable, Claude Desktop's version", path: "/mcp/", version: "2025-11-25"},
		{name: "streamable, client's default version", path: "/mcp/"},
		{name: "streamable without slash", path: "/mcp", version: "2025-06-18"},
		{name: "streamable at /api/", path: "/api/", version: "2025-11-25"},
		{name: "legacy SSE", path: "/sse", sse: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, hc, srv.base+tc.path, tc.sse, tc.version)
			defer cs.Close()
			if got := callEcho(t, cs, "echo", "hello"); got != `{"echo":"hello"}` {
				t.Fatalf("echo = %s", got)
			}
			if tc.version != "" && cs.InitializeResult().ProtocolVersion != tc.version {
				t.Fatalf("negotiated %s, want %s", cs.InitializeResult().ProtocolVersion, tc.version)
			}
		})
	}
	t.Run("wrong token is refused", func(t *testing.T) {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
		_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp/", HTTPClient: bearerClient("nope"), MaxRetries: -1}, nil)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Fatalf("connect with a wrong token: %v", err)
		}
	})
}

// TestHTTPStateless: the --stateless choice serves calls without sessions.
func TestHTTPStateless(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{Stateless: true})
	cs := connect(t, http.DefaultClient, srv.base+"/mcp/", false, "")
	defer cs.Close()
	if got := callEcho(t, cs, "echo", "x"); got != `{"echo":"x"}` {
		t.Fatalf("echo = %s", got)
	}
	code, hdr, _ := rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders(""))
	if code != 200 || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless initialize: %d, session %q", code, hdr.Get("Mcp-Session-Id"))
	}
	if code, _, _ := rawRequest(t, "GET", srv.base+"/mcp/", "", map[string]string{"Accept": "text/event-stream"}); code != http.StatusMethodNotAllowed {
		t.Fatalf("stateless GET: %d, want 405", code)
	}
}

// TestHTTPGracefulShutdown stops the server while a call is in flight on
// each transport: both calls answer, then everything closes.
func TestHTTPGracefulShutdown(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	srv := start(t, Options{Server: testMCPServer(release, started), BearerToken: testToken})
	hc := bearerClient(testToken)

	type answer struct {
		text string
		err  error
	}
	answers := make(chan answer, 2)
	for _, tr := range []struct {
		path string
		sse  bool
	}{{"/mcp/", false}, {"/sse", true}} {
		cs := connect(t, hc, srv.base+tr.path, tr.sse, "2025-11-25")
		defer cs.Close()
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"text": tr.path}})
			if err != nil {
				answers <- answer{err: err}
				return
			}
			answers <- answer{text: res.Content[0].(*mcp.TextContent).Text}
		}()
		<-started
	}

	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop() }()
	waitFor(t, "readiness to report draining", func() bool { return srv.h.draining.Load() })
	waitFor(t, "connections to be refused while draining", func() bool { return dialRefused(srv.base) })
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) with two calls in flight", err)
	default:
	}
	close(release)
	for range 2 {
		a := <-answers
		if a.err != nil || !strings.HasPrefix(a.text, `{"echo":"slow /`) {
			t.Fatalf("in-flight call during shutdown: %q, %v", a.text, a.err)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for range srv.h.opts.Server.Sessions() {
		t.Fatal("a session survived the shutdown")
	}
	if strings.Contains(srv.logs.String(), "deadline passed") {
		t.Fatalf("shutdown waited out its deadline:\n%s", srv.logs)
	}
}
