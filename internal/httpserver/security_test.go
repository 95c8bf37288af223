package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestHTTPRequestChecks sends raw requests past every check the handler
// makes, and the ones that must get through.
func TestHTTPRequestChecks(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{BearerToken: testToken, MaxBodyBytes: 64 << 10})
	ok := mcpHeaders(testToken)
	huge := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}`

	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		chunked                  bool // send the body without Content-Length
		cutOK                    bool // the server cutting the connection while the body is written also refuses it
		want                     int
		wantIn                   string // in the body
	}{
		{name: "initialize with the token", method: "POST", path: "/mcp/", body: initBody, hdr: ok, want: 200},
		{name: "path without slash", method: "POST", path: "/mcp", body: initBody, hdr: ok, want: 200},
		{name: "reference server's /api/", method: "POST", path: "/api/", body: initBody, hdr: ok, want: 200},
		{name: "no token", method: "POST", path: "/mcp/", body: initBody, hdr: mcpHeaders(""), want: 401, wantIn: "unauthorized"},
		{name: "wrong token", method: "POST", path: "/mcp/", body: initBody, hdr: mcpHeaders("not-the-token"), want: 401},
		{name: "token as a prefix", method: "POST", path: "/mcp/", body: initBody, hdr: mcpHeaders(testToken + "x"), want: 401},
		{name: "wrong scheme", method: "POST", path: "/mcp/", body: initBody, hdr: with(ok, "Authorization", "Basic "+testToken), want: 401},
		{name: "no token on SSE", method: "GET", path: "/sse", hdr: map[string]string{"Accept": "text/event-stream"}, want: 401},
		{name: "no token, unknown path", method: "GET", path: "/admin", want: 401},
		{name: "unknown path", method: "GET", path: "/admin", hdr: ok, want: 404},
		{name: "cross-site browser request", method: "POST", path: "/mcp/", body: initBody,
			hdr: with(ok, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"), want: 403, wantIn: "cross-origin"},
		{name: "foreign Origin, no Sec-Fetch-Site", method: "POST", path: "/mcp/", body: initBody,
			hdr: with(ok, "Origin", "https://evil.example"), want: 403},
		{name: "cross-site GET opening an SSE session", method: "GET", path: "/sse",
			hdr: with(ok, "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"), want: 403},
		{name: "same-origin browser request", method: "POST", path: "/mcp/", body: initBody,
			hdr: with(ok, "Sec-Fetch-Site", "same-origin"), want: 200},
		{name: "foreign Host (DNS rebinding)", method: "POST", path: "/mcp/", body: initBody,
			hdr: with(ok, "Host", "evil.example.com"), want: 403, wantIn: "invalid Host"},
		{name: "foreign Host on SSE", method: "GET", path: "/sse", hdr: with(ok, "Host", "evil.example.com"), want: 403},
		// Expect: 100-continue, as an honest client sends a large body: the
		// 413 comes before a byte of it. Without it the client could still be
		// writing when the server closed, and read "connection reset by peer"
		// instead of the answer (a fresh-clone CI run did, under load).
		{name: "oversized body", method: "POST", path: "/mcp/", body: huge, hdr: with(ok, "Expect", "100-continue"), want: 413, wantIn: "exceeds"},
		// Without a length the server must read to know, and closes the
		// connection once it knows: the client, still writing, may read
		// "connection reset" or "broken pipe" instead of the 413 (1 in 100
		// runs under -race). Either way nothing was served (cutOK).
		{name: "oversized chunked body", method: "POST", path: "/mcp/", body: huge, hdr: ok, chunked: true, want: 413, cutOK: true},
		{name: "liveness without token", method: "GET", path: "/health/liveness", want: 200, wantIn: `"alive"`},
		{name: "readiness without token", method: "GET", path: "/health/readiness", want: 200, wantIn: `"ready"`},
		{name: "health is read-only", method: "POST", path: "/health/liveness", want: 405},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.body != "" {
				req.Body = io.NopCloser(strings.NewReader(tc.body))
				req.ContentLength = int64(len(tc.body))
				if tc.chunked {
					req.ContentLength = -1 // Transfer-Encoding: chunked
				}
			}
			for k, v := range tc.hdr {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil && tc.cutOK && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
				t.Logf("the server cut the connection before its answer was read: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf) // SSE answers stream: the first chunk is enough
			b.Write(buf[:n])
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s: status %d, want %d: %s", tc.method, tc.path, resp.StatusCode, tc.want, b.String())
			}
			if !strings.Contains(b.String(), tc.wantIn) {
				t.Fatalf("body %q does not contain %q", b.String(), tc.wantIn)
			}
			if tc.want == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
}

// TestHTTPRateLimit floods the handler: the bucket answers 429 with a
// JSON-RPC error body and Retry-After, and an unauthenticated flood from the
// same address does not spend the authorised clients' budget.
func TestHTTPRateLimit(t *testing.T) {
	t.Parallel()
	// Buckets that refill once in 100 s: no token comes back while the test
	// runs, however slow the machine (at 5 a second, a sixth request 200 ms
	// late was let through on a loaded one).
	srv := start(t, Options{BearerToken: testToken, Rate: 0.01, Burst: 5, AnonRate: 0.01, AnonBurst: 3})
	live := srv.base + "/health/liveness"
	auth := map[string]string{"Authorization": "Bearer " + testToken}

	statuses := func(n int, hdr map[string]string) []int {
		var got []int
		for range n {
			code, _, _ := rawRequest(t, "GET", live, "", hdr)
			got = append(got, code)
		}
		return got
	}
	if got := statuses(4, nil); got[2] != 200 || got[3] != 429 {
		t.Fatalf("unauthenticated flood: statuses %v, want 429 after 3", got)
	}
	if got := statuses(5, auth); got[4] != 200 {
		t.Fatalf("authorised client starved by the unauthenticated flood: %v", got)
	}
	code, hdr, body := rawRequest(t, "GET", live, "", auth)
	if code != 429 {
		t.Fatalf("sixth authorised request: status %d, want 429", code)
	}
	if s, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After = %q", hdr.Get("Retry-After"))
	}
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != codeServerError || !strings.Contains(e.Error.Message, "rate limited") {
		t.Fatalf("429 body %q is not a JSON-RPC error (%v)", body, err)
	}
	// A wrong token counts as unauthenticated: brute force meets the small bucket.
	if code, _, _ := rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders("guess")); code != 429 {
		t.Fatalf("token guess after the flood: status %d, want 429", code)
	}
}

// TestHTTPLimiterRefillAndSweep drives the limiter on a fake clock.
func TestHTTPLimiterRefillAndSweep(t *testing.T) {
	t.Parallel()
	clock := testutil.NewClock(time.Unix(1000, 0))
	l := newLimiter(2, 2, rate.Limit(-1), 0)
	l.now = clock.Now
	tests := []struct {
		advance time.Duration
		ip      string
		want    bool
	}{
		{0, "10.0.0.1", true},
		{0, "10.0.0.1", true},
		{0, "10.0.0.1", false},
		{0, "10.0.0.2", true}, // another client has its own bucket
		{500 * time.Millisecond, "10.0.0.1", true},
		{0, "10.0.0.1", false},
	}
	for i, tc := range tests {
		clock.Advance(tc.advance)
		retry, ok := l.allow(tc.ip, true)
		if ok != tc.want {
			t.Fatalf("step %d (%s): allowed %v, want %v", i, tc.ip, ok, tc.want)
		}
		if !ok && (retry <= 0 || retry > time.Second) {
			t.Fatalf("step %d: retry after %v", i, retry)
		}
	}
	if _, ok := l.allow("10.0.0.9", false); !ok {
		t.Fatal("a negative anonymous rate must disable that limit")
	}
	clock.Advance(bucketIdle + sweepInterval + time.Second)
	l.allow("10.0.0.3", true)
	if len(l.clients) != 1 {
		t.Fatalf("idle buckets not swept: %d left", len(l.clients))
	}
}

func TestHTTPBearerCheck(t *testing.T) {
	t.Parallel()
	b := newBearer("tok")
	tests := []struct {
		header string
		want   bool
	}{
		{"Bearer tok", true},
		{"bearer tok", true},
		{"Bearer  tok ", true},
		{"Bearer tok2", false},
		{"Bearer to", false},
		{"Basic tok", false},
		{"tok", false},
		{"", false},
	}
	for _, tc := range tests {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", tc.header)
		if got := b.check(r); got != tc.want {
			t.Errorf("Authorization %q: %v, want %v", tc.header, got, tc.want)
		}
	}
	r, _ := http.NewRequest("GET", "/", nil)
	if !newBearer("").check(r) {
		t.Error("no token configured must let every request through")
	}
}

func TestHTTPReadinessFollowsStore(t *testing.T) {
	t.Parallel()
	var failing error
	srv := start(t, Options{Ready: func(ctx context.Context) error { return failing }})
	if code, _, _ := rawRequest(t, "GET", srv.base+ReadinessPath, "", nil); code != 200 {
		t.Fatalf("readiness %d, want 200", code)
	}
	failing = errors.New("database is locked at /secret/path")
	code, _, body := rawRequest(t, "GET", srv.base+ReadinessPath, "", nil)
	if code != 503 || strings.Contains(body, "secret") {
		t.Fatalf("readiness with a failing store: %d %q (want 503, no detail)", code, body)
	}
	if code, _, _ := rawRequest(t, "GET", srv.base+LivenessPath, "", nil); code != 200 {
		t.Fatalf("liveness %d, want 200 while the store fails", code)
	}
}

// TestHTTPListenRefusesNonLoopback: unless asked for as public (serve
// --public), only loopback binds.
func TestHTTPListenRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr     string
		public   bool
		wantLoop bool // refused with ErrNotLoopback when false and not public
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"0.0.0.0:0", true, true},
	}
	for _, tc := range tests {
		ln, err := Listen(t.Context(), tc.addr, tc.public)
		if tc.wantLoop {
			if err != nil {
				t.Errorf("Listen(%q, public=%v): %v", tc.addr, tc.public, err)
				continue
			}
			ln.Close()
			continue
		}
		if !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Listen(%q) not public: %v, want ErrNotLoopback", tc.addr, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
	}
}

// TestHTTPRequestLogHasNoSecrets: one line per request with the fields an
// operator needs, and neither the token nor an SSE session id.
func TestHTTPRequestLogHasNoSecrets(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{BearerToken: testToken})
	rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders(testToken))
	rawRequest(t, "POST", srv.base+"/sse?sessionid=SESSIONSECRET", `{}`, mcpHeaders(testToken))
	rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders("wrong-"+testToken))
	srv.stop()
	logs := srv.logs.String()
	for _, secret := range []string{testToken, "SESSIONSECRET", "Bearer"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("log contains %q:\n%s", secret, logs)
		}
	}
	for _, want := range []string{`msg="http request" method=POST path=/mcp/ status=200`, "status=401", "path=/sse status=404", "remote=127.0.0.1:", "duration="} {
		if !strings.Contains(logs, want) {
			t.Fatalf("log lacks %q:\n%s", want, logs)
		}
	}
}

func TestHTTPClientKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ remote, want string }{
		{"127.0.0.1:5000", "127.0.0.1"},
		{"192.0.2.7:443", "192.0.2.7"},
		{"[::1]:80", "::1"},
		{"[2001:db8:1:2:aaaa::1]:80", "2001:db8:1:2::/64"}, // one host's /64 is one client
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"pipe", "pipe"},
	}
	for _, tc := range tests {
		r := &http.Request{RemoteAddr: tc.remote}
		if got := clientIP(r); got != tc.want {
			t.Errorf("clientIP(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

// TestHTTPReadinessCarriesNotice: a server that starts on a new store
// beside a vault with history is ready, and its readiness answer says so.
func TestHTTPReadinessCarriesNotice(t *testing.T) {
	t.Parallel()
	notice := ""
	srv := start(t, Options{Ready: func(ctx context.Context) error { return nil }, Notice: func() string { return notice }})
	if code, _, body := rawRequest(t, "GET", srv.base+ReadinessPath, "", nil); code != 200 || strings.Contains(body, "notice") {
		t.Fatalf("readiness %d %q, want 200 without a notice", code, body)
	}
	notice = "new store beside a vault with 3 email(s) in Done/"
	if code, _, body := rawRequest(t, "GET", srv.base+ReadinessPath, "", nil); code != 200 || !strings.Contains(body, `"notice":"new store beside a vault`) {
		t.Fatalf("readiness %d %q, want 200 with the notice", code, body)
	}
}
