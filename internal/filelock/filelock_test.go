package filelock

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestLockExcludes: holders of one path take turns: never two inside at
// once (each Lock opens its own descriptor, as another process would).
func TestLockExcludes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	var inside, most, turns atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				unlock, err := Lock(path)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				turns.Add(1)
				inside.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 || turns.Load() != 400 {
		t.Fatalf("at most %d holders at once over %d turns; want 1 over 400", most.Load(), turns.Load())
	}
}
