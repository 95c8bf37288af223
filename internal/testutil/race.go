package testutil

import "sync"

// Race runs f in n goroutines released at the same instant (each waits on
// one start signal, so none has a head start while the others are being
// created) and returns when all have returned. f gets its goroutine's
// index.
func Race(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}
