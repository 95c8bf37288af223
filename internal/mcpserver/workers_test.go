package mcpserver

import (
	"sync"
	"testing"
)

// TestWorkerPoolNeverQueues: calls that wait for one another all run at
// once, however many more there are than idle workers kept: the pool
// starts a goroutine rather than make a call wait for a worker (a queue
// would deadlock here), and every call runs exactly once.
func TestWorkerPoolNeverQueues(t *testing.T) {
	t.Parallel()
	p := newWorkerPool()
	for round := range 3 { // later rounds start on the workers the earlier ones left idle
		const n = 4 * maxIdleWorkers
		var all sync.WaitGroup
		all.Add(n)
		var mu sync.Mutex
		ran := map[int]int{}
		var done sync.WaitGroup
		for i := range n {
			done.Add(1)
			go p.run(func() {
				defer done.Done()
				all.Done()
				all.Wait() // returns only once all n calls run together
				mu.Lock()
				ran[i]++
				mu.Unlock()
			})
		}
		done.Wait()
		for i := range n {
			if ran[i] != 1 {
				t.Fatalf("round %d: call %d ran %d times", round, i, ran[i])
			}
		}
	}
}
