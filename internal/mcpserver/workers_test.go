package mcpserver

import (
	"strings"
	"sync"
	"testing"
)

// TestWorkerPoolRunsEveryCall: calls run to completion whether a worker is
// idle or not (more concurrent calls than workers run on their own
// goroutines, never queued), and a panic in one reaches the caller with the
// worker's stack, where the server's recovery answers it, leaving the
// worker serving.
func TestWorkerPoolRunsEveryCall(t *testing.T) {
	t.Parallel()
	p := newWorkerPool(2)
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := 0
	for range 8 { // 8 blocked at once with 2 workers: 6 must run inline
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.run(func() {
				started <- struct{}{}
				<-release
				mu.Lock()
				ran++
				mu.Unlock()
			})
		}()
	}
	for range 8 {
		<-started // would block forever if a call were queued behind a busy worker
	}
	close(release)
	wg.Wait()
	if ran != 8 {
		t.Fatalf("%d of 8 calls ran", ran)
	}

	for range 3 {
		got := func() (v any) {
			defer func() { v = recover() }()
			p.run(func() { panic("boom") })
			return nil
		}()
		s, _ := got.(string)
		if !strings.HasPrefix(s, "boom\n") || !strings.Contains(s, "runCatching") {
			t.Fatalf("panic reached the caller as %#v", got)
		}
	}
	done := false
	p.run(func() { done = true })
	if !done {
		t.Fatal("the pool stopped running calls after a panic")
	}
}
