package httpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

const fuzzMaxBody = 4 << 10

// frontDoorStatuses are the only answers the front door may give: its own
// refusals, go-sdk's (bad JSON, wrong media type, unknown session, method
// not allowed, foreign Host) and successes. Never a 5xx but the readiness
// 503, which this handler never drains into.
var frontDoorStatuses = map[int]bool{
	200: true, 202: true, 204: true,
	400: true, 401: true, 403: true, 404: true, 405: true, 406: true,
	408: true, 413: true, 415: true, 429: true,
}

var (
	fuzzOnce    sync.Once
	fuzzHandler *Handler
	fuzzReached struct {
		sync.Mutex
		bad []string
	}
)

// frontDoor is one stateful handler shared by every fuzz input (building
// one per input would fuzz go-sdk's constructors), with a small body bound
// and short sessions so the run does not pile them up.
func frontDoor(t testing.TB) *Handler {
	fuzzOnce.Do(func() {
		h, err := New(Options{
			Server:         testMCPServer(nil, nil),
			BearerToken:    testToken,
			MaxBodyBytes:   fuzzMaxBody,
			SessionTimeout: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		h.reached = func(r *http.Request) {
			if why := mustNotReach(r); why != "" {
				fuzzReached.Lock()
				fuzzReached.bad = append(fuzzReached.bad, why)
				fuzzReached.Unlock()
			}
		}
		fuzzHandler = h
	})
	return fuzzHandler
}

// mustNotReach says why r should have been refused before any MCP code saw
// it, judged without the handler's own code: no Authorization header holds
// the token, a browser says it comes from another site, or the body is over
// the bound.
func mustNotReach(r *http.Request) string {
	authorised := false
	for _, v := range r.Header.Values("Authorization") {
		if strings.Contains(v, testToken) {
			authorised = true
		}
	}
	if !authorised {
		return fmt.Sprintf("%s %s reached MCP without the token (Authorization %q)", r.Method, r.URL.Path, r.Header.Values("Authorization"))
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return fmt.Sprintf("%s %s reached MCP from a cross-site page", r.Method, r.URL.Path)
	}
	if r.ContentLength > fuzzMaxBody {
		return fmt.Sprintf("%s %s reached MCP with a %d-byte body", r.Method, r.URL.Path, r.ContentLength)
	}
	return ""
}

// FuzzHTTPFrontDoor sends arbitrary requests (method, target, headers,
// body, client address) through the whole handler chain in process: rate
// limit, bearer token, routes, body bound and deadline, Origin, go-sdk's
// Host check and transports. Invariants: no panic, a request without the
// token (or from a cross-site page, or over the body bound) never reaches
// an MCP handler, and every status is one the front door is meant to give.
// What net/http itself refuses to parse never reaches the handler, so such
// inputs are skipped.
func FuzzHTTPFrontDoor(f *testing.F) {
	auth := "Authorization: Bearer " + testToken + "\r\n"
	mcpHdr := "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	for _, seed := range []struct {
		method, target, headers string
		body                    string
	}{
		{"POST", "/mcp/", auth + mcpHdr, initBody},
		{"POST", "/mcp/", mcpHdr, initBody},
		{"POST", "/mcp", "Authorization: bearer  " + testToken + "  \r\n" + mcpHdr, initBody},
		{"POST", "/api/", "Authorization: Basic " + testToken + "\r\n" + mcpHdr, initBody},
		{"POST", "/mcp/", auth + mcpHdr + "Origin: https://evil.example\r\nSec-Fetch-Site: cross-site\r\n", initBody},
		{"POST", "/mcp/", auth + mcpHdr + "Host: evil.example.com\r\n", initBody},
		{"POST", "/mcp/", auth + mcpHdr + "Transfer-Encoding: chunked\r\n", "5\r\n{\"a\":\r\n0\r\n\r\n"},
		{"POST", "/mcp/", auth + mcpHdr + "Expect: 100-continue\r\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", "/mcp/", auth + mcpHdr + "Mcp-Session-Id: nope\r\n", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"POST", "/mcp/", auth + "Content-Type: text/plain\r\n", "hello"},
		{"POST", "/mcp/", auth + mcpHdr, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`},
		{"GET", "/mcp/", auth + "Accept: text/event-stream\r\n", ""},
		{"DELETE", "/mcp/", auth + "Mcp-Session-Id: x\r\n", ""},
		{"GET", "/sse", auth + "Accept: text/event-stream\r\n", ""},
		{"POST", "/sse?sessionid=abc", auth + mcpHdr, `{}`},
		{"GET", "/sse", "Accept: text/event-stream\r\n", ""},
		{"GET", "/health/liveness", "", ""},
		{"HEAD", "/health/readiness", "", ""},
		{"POST", "/health/liveness", "Content-Length: 3\r\n", "abc"},
		{"GET", "/admin", auth, ""},
		{"OPTIONS", "*", "", ""},
		{"GET", "http://evil.example/mcp/", auth, ""},
	} {
		f.Add(seed.method, seed.target, seed.headers, []byte(seed.body), byte(1))
	}
	f.Fuzz(func(t *testing.T, method, target, headers string, body []byte, client byte) {
		var raw bytes.Buffer
		fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\n", method, target)
		if !strings.Contains(strings.ToLower(headers), "host:") {
			raw.WriteString("Host: 127.0.0.1:8765\r\n")
		}
		raw.WriteString(headers)
		lower := strings.ToLower(headers)
		if !strings.Contains(lower, "content-length:") && !strings.Contains(lower, "transfer-encoding:") && len(body) > 0 {
			fmt.Fprintf(&raw, "Content-Length: %d\r\n", len(body))
		}
		raw.WriteString("\r\n")
		raw.Write(body)
		r, err := http.ReadRequest(bufio.NewReader(&raw))
		if err != nil {
			t.Skip("net/http refuses it before any handler")
		}
		if client%2 == 0 {
			r.RemoteAddr = fmt.Sprintf("10.0.0.%d:40000", client)
		} else {
			r.RemoteAddr = fmt.Sprintf("[2001:db8:%x::1]:40000", client)
		}
		// Streams hang until their request ends: end every request soon
		// (briefly: the fuzzer replays an input many times to minimise it).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		// As net/http sets it: go-sdk's DNS-rebinding check applies to a
		// loopback listener.
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765})
		r = r.WithContext(ctx)

		h := frontDoor(t)
		w := httptest.NewRecorder()
		served := make(chan struct{})
		go func() {
			defer close(served)
			h.ServeHTTP(w, r)
		}()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("%s %s: still unanswered after 10 s, past its request's end\n%s", method, target, buf[:runtime.Stack(buf, true)])
		}
		io.Copy(io.Discard, r.Body)

		fuzzReached.Lock()
		bad := fuzzReached.bad
		fuzzReached.bad = nil
		fuzzReached.Unlock()
		for _, why := range bad {
			t.Error(why)
		}
		if rt, ok := h.routes[r.URL.Path]; ok && !rt.public && w.Code < 300 && foreignHost(r.Host) {
			t.Errorf("%s %s with Host %q answered %d (DNS rebinding)", method, target, r.Host, w.Code)
		}
		if !frontDoorStatuses[w.Code] {
			t.Errorf("%s %s: status %d is not one the front door gives\n%s", method, target, w.Code, w.Body.String())
		}
	})
}

// foreignHost reports a Host header that names neither localhost nor a
// loopback address: a page's DNS-rebinding attempt on a loopback server.
func foreignHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if name == "" || strings.EqualFold(name, "localhost") {
		return false
	}
	ip, err := netip.ParseAddr(name)
	return err != nil || !ip.IsLoopback()
}
