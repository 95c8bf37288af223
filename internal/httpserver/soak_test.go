package httpserver

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestHTTPSoak opens and closes sessions on both transports for 2,000
// requests (400 in a quick run, three of its 16 sessions on SSE:
// testutil.Size), then checks that goroutines, open descriptors and
// sessions come back to where they started. It asserts no timing: it only waits (bounded) for the counts to
// settle.
func TestHTTPSoak(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("soak: skipped in -short")
	}
	srv := start(t, Options{BearerToken: testToken})
	tr := &bearerTransport{token: testToken, base: http.DefaultTransport.(*http.Transport).Clone()}
	hc := &http.Client{Transport: tr}

	// Warm up once on each transport so lazily started goroutines (the
	// runtime's, net/http's) are part of the baseline.
	soakSession(t, hc, srv.base, 0, 1)
	soakSession(t, hc, srv.base, 1, 1)
	tr.base.CloseIdleConnections()
	baseG, baseFD := settle(t, -1, -1)

	// Each session: initialize + initialized + calls + close, plus the
	// standalone GET stream; 8 workers × 10 sessions × ~25 requests.
	const workers, calls = 8, 21
	sessions := testutil.Size(2, 10)
	var requests atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for s := range sessions {
				requests.Add(int64(soakSession(t, hc, srv.base, w*sessions+s, calls)))
			}
		})
	}
	wg.Wait()
	tr.base.CloseIdleConnections()
	t.Logf("%d requests in %d sessions", requests.Load(), workers*sessions)
	if requests.Load() < int64(workers*sessions*25) {
		t.Fatalf("only %d requests: the soak is too small", requests.Load())
	}

	g, fd := settle(t, baseG, baseFD)
	t.Logf("goroutines %d → %d, descriptors %d → %d", baseG, g, baseFD, fd)
	n := 0
	for range srv.h.opts.Server.Sessions() {
		n++
	}
	if n != 0 {
		t.Fatalf("%d sessions still open after every client closed its own", n)
	}
}

// soakSession runs one session (every fifth over legacy SSE) and returns
// roughly how many HTTP requests it made.
func soakSession(t *testing.T, hc *http.Client, base string, i, calls int) int {
	sse := i%5 == 1
	path := "/mcp/"
	if sse {
		path = "/sse"
	}
	cs := connect(t, hc, base+path, sse, "2025-11-25")
	for c := range calls {
		want := fmt.Sprintf(`{"echo":"%d-%d"}`, i, c)
		if got := callEcho(t, cs, "echo", fmt.Sprintf("%d-%d", i, c)); got != want {
			t.Errorf("echo = %s, want %s", got, want)
		}
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing session %d: %v", i, err)
	}
	return calls + 4 // initialize, initialized, GET stream, DELETE (or SSE's GET)
}

// settle waits for the goroutine and descriptor counts to stop falling and,
// given a baseline, to come back to it (with a little slack for the
// runtime's own). With a negative baseline it returns the settled counts.
func settle(t *testing.T, baseG, baseFD int) (int, int) {
	t.Helper()
	const slack = 2
	var g, fd int
	testutil.Eventually(t, 15*time.Second, func() error {
		runtime.GC()
		g, fd = runtime.NumGoroutine(), openFDs(t)
		if baseG < 0 {
			time.Sleep(50 * time.Millisecond) // counts that stay put for a moment have settled
			if runtime.NumGoroutine() == g && openFDs(t) == fd {
				return nil
			}
		} else if g <= baseG+slack && (baseFD < 0 || fd <= baseFD+slack) {
			return nil
		}
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		return fmt.Errorf("goroutines %d (baseline %d), descriptors %d (baseline %d) did not come back:\n%s", g, baseG, fd, baseFD, buf)
	})
	return g, fd
}

// openFDs counts this process's open descriptors (-1 where /proc is absent).
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// waitFor waits up to 15 s for cond: the bound keeps a leak from hanging
// the test, and nothing is asserted about how fast things settle.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, func() error {
		if !cond() {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		return nil
	})
}

// TestHTTPAbandonedSessionsExpire: a client that initializes and vanishes
// without DELETE leaves nothing behind once SessionTimeout passes.
func TestHTTPAbandonedSessionsExpire(t *testing.T) {
	t.Parallel()
	srv := start(t, Options{SessionTimeout: 200 * time.Millisecond})
	for range 5 {
		code, hdr, _ := rawRequest(t, "POST", srv.base+"/mcp/", initBody, mcpHeaders(""))
		if code != 200 || hdr.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d", code)
		}
	}
	n := 0
	for range srv.h.opts.Server.Sessions() {
		n++
	}
	if n == 0 {
		t.Fatal("no session to abandon: the test would prove nothing")
	}
	waitFor(t, "abandoned sessions to close", func() bool {
		for range srv.h.opts.Server.Sessions() {
			return false
		}
		return true
	})
}
