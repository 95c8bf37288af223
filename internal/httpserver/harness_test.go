package httpserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

const testToken = "s3cret-token-for-tests-0123456789"

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// testMCPServer has an echo tool and a slow tool that holds its call until
// release is closed (or its context ends), to catch calls in flight.
func testMCPServer(release <-chan struct{}, started chan<- struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut{Echo: in.Text}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-release:
			return nil, echoOut{Echo: "slow " + in.Text}, nil
		case <-ctx.Done():
			return nil, echoOut{}, ctx.Err()
		}
	})
	return s
}

// running is a Handler served by Serve on a loopback port.
type running struct {
	base    string
	h       *Handler
	cancel  context.CancelFunc
	done    chan error
	logs    *testutil.Buffer
	stopped bool
}

// start serves opts on 127.0.0.1:0 until the test ends (or stop is called).
func start(t *testing.T, opts Options) *running {
	t.Helper()
	logs := &testutil.Buffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.Server == nil {
		opts.Server = testMCPServer(nil, nil)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(t.Context(), "127.0.0.1:0", opts.BearerToken != "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{base: "http://" + ln.Addr().String(), h: h, cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { r.done <- Serve(ctx, ln, h, 5*time.Second) }()
	t.Cleanup(func() {
		closeIdleClientConns()
		if err := r.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

func (r *running) stop() error {
	if r.stopped {
		return nil
	}
	r.stopped = true
	r.cancel()
	return <-r.done
}

// bearerClient is an http.Client that sends the token on every request, as
// an agent configured with AGENT_MAIL_BEARER_TOKEN does.
func bearerClient(token string) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	clientTransports.Lock()
	clientTransports.list = append(clientTransports.list, base)
	clientTransports.Unlock()
	return &http.Client{Transport: &bearerTransport{token: token, base: base}}
}

// clientTransports are the transports bearerClient made.
var clientTransports struct {
	sync.Mutex
	list []*http.Transport
}

// closeIdleClientConns closes the test clients' idle connections, as a
// client that is done does, before a test's server stops. A transport may
// have dialed a connection for a request that another connection then
// took: the server sees it as new, never used, and a graceful shutdown
// waits 5 s before it counts such a connection as idle (net/http, issue
// 22682). A transport closes the connections that become idle after this
// too, until its next request.
func closeIdleClientConns() {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	clientTransports.Lock()
	defer clientTransports.Unlock()
	for _, tr := range clientTransports.list {
		tr.CloseIdleConnections()
	}
}

type bearerTransport struct {
	token string
	base  *http.Transport
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens a go-sdk client session over Streamable HTTP (path under
// base) or legacy SSE.
func connect(t testing.TB, hc *http.Client, endpoint string, sse bool, version string) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: hc}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "httpserver-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	return cs
}

func callEcho(t testing.TB, cs *mcp.ClientSession, tool, text string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %+v", tool, res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// rawRequest sends one request and returns status, headers and body.
func rawRequest(t *testing.T, method, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func mcpHeaders(token string) map[string]string {
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h
}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// dialRefused reports whether nothing listens at base any more.
func dialRefused(base string) bool {
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}
