package httpserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stalledRequest is a request whose headers promise a body that never
// comes: the shape of issue 18's flood.
func stalledRequest(host, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp/ HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", host)
	if token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", token)
	}
	b.WriteString("Content-Length: 100\r\n\r\n")
	return b.String()
}

// floodStalled opens n connections that each send stalledRequest and never
// the body, and returns them open.
func floodStalled(t *testing.T, addr, token string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	req := stalledRequest(addr, token)
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		// A connection the server refused at accept may be closed already:
		// a failed write is one more refusal, not a test failure.
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(req))
	}
	return conns
}

// TestSlowBodyUnauthenticatedFlood is issue 18 item 2: 500 connections send
// headers and a Content-Length without a token, and never the body. Each
// must get its refusal at once, on a connection the server then closes, and
// an authorised call must still be answered.
func TestSlowBodyUnauthenticatedFlood(t *testing.T) {
	srv := start(t, Options{BearerToken: testToken})
	addr := strings.TrimPrefix(srv.base, "http://")
	conns := floodStalled(t, addr, "", 500)

	// Generous deadlines: the assertion is "answered", not "fast".
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[string]int{}
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(deadline)
			status := "closed"
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				status = resp.Status
				if resp.StatusCode != 401 && resp.StatusCode != 429 && resp.StatusCode != 503 {
					t.Errorf("stalled unauthenticated request answered %s", resp.Status)
				}
				if !resp.Close {
					t.Errorf("%s without Connection: close", resp.Status)
				}
				resp.Body.Close()
				// The server closes its side: the next read ends, never waits.
				if _, err := c.Read(make([]byte, 1)); isTimeout(err) {
					status = "left open after " + resp.Status
				}
			} else if isTimeout(err) {
				status = "no answer"
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("500 stalled unauthenticated requests: %v", statuses)
	for s, n := range statuses {
		if s == "no answer" || strings.HasPrefix(s, "left open") {
			t.Errorf("%d of 500 stalled requests: %s", n, s)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := authorisedCall(ctx, srv.base, testToken); err != nil {
		t.Fatalf("authorised call after the flood: %v", err)
	}
}

// TestStalledFloodWhileConnectionsHeld: the flood's connections are still
// open (their refusals unread) when the authorised client calls.
func TestStalledFloodWhileConnectionsHeld(t *testing.T) {
	srv := start(t, Options{BearerToken: testToken})
	floodStalled(t, strings.TrimPrefix(srv.base, "http://"), "", 500)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := authorisedCall(ctx, srv.base, testToken); err != nil {
		t.Fatalf("authorised call during the flood: %v", err)
	}
}

// authorisedCall connects a go-sdk client with the token and calls echo.
func authorisedCall(ctx context.Context, base, token string) error {
	cs, err := connectCtx(ctx, bearerClient(token), base+"/mcp/")
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, echoParams("after the flood"))
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("echo: isError %+v", res.Content)
	}
	return nil
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func connectCtx(ctx context.Context, hc *http.Client, endpoint string) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}
	c := mcp.NewClient(&mcp.Implementation{Name: "httpserver-test", Version: "0"}, nil)
	return c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

func echoParams(text string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}}
}
