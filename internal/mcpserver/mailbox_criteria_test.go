package mcpserver

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestMailboxSuccessCriteria runs the four-tool spec's success criteria in
// process: SC-005 consecutive calls with no error and heap growth under
// 10 MB are checked; SC-001 (tool listing under 1 s) and SC-004 (every call
// under 2 s) are times, which a loaded machine stretches at will, so they
// are logged here and measured in BENCHMARKS.md, never asserted. The spec
// asks for 100 calls; MAILGATE_MAILBOX_CALLS=10000 runs the longer run.
// Not parallel: the heap is the process's, and the parallel tests (several
// per core, TestMain) allocate tens of MB beside it.
func TestMailboxSuccessCriteria(t *testing.T) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("MAILGATE_MAILBOX_CALLS")); err == nil && v > 0 {
		n = v
	}
	start := time.Now()
	alice, bob, _, _ := mbPair(t)
	if _, err := alice.cs.ListTools(alice.ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("SC-001: store open + connect + tools/list in %v", time.Since(start).Round(time.Millisecond))
	mbOK(t, bob, "status", map[string]any{"status": "ready"})

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	calls := []struct {
		h    *amHarness
		tool string
		args map[string]any
	}{
		{alice, "send", map[string]any{"recipient": "bob", "message": "ping"}},
		{bob, "receive", nil},
		{bob, "status", map[string]any{"status": "work"}},
		{alice, "list-recipients", nil},
	}
	before := heap()
	var slowest time.Duration
	began := time.Now()
	for i := range n {
		c := calls[i%len(calls)]
		t0 := time.Now()
		if text, isErr := mbText(t, c.h, c.tool, c.args); isErr {
			t.Fatalf("SC-005: call %d (%s) failed: %s", i, c.tool, text)
		}
		slowest = max(slowest, time.Since(t0))
	}
	total := time.Since(began)
	growth := int64(heap()) - int64(before)
	t.Logf("SC-004/005: %d calls in %v (mean %v, slowest %v), heap growth %.2f MB",
		n, total.Round(time.Millisecond), (total / time.Duration(n)).Round(time.Microsecond), slowest.Round(time.Microsecond), float64(growth)/(1<<20))
	if growth > 10<<20 {
		t.Errorf("SC-005: heap grew %d bytes over %d calls, want under 10 MB", growth, n)
	}
}
