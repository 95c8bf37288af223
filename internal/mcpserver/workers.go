package mcpserver

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Tool calls run on long-lived worker goroutines. go-sdk starts a new
// goroutine for every call, with the runtime's smallest stack; a call
// reaching SQLite (modernc.org/sqlite's translated C has deep, wide frames)
// grows it by copying several times, and the next call's goroutine starts
// small again: stack growth was ~6–7% of the server's CPU under load. A
// worker keeps the stack its first calls grew. When every worker is busy a
// call runs on its own goroutine as before, so the pool never queues a call
// or bounds concurrency.

// workers is the process's pool of tool-call workers.
var workers = newWorkerPool(4 * runtime.GOMAXPROCS(0))

type workerPool struct {
	size  int
	start sync.Once
	jobs  chan *workerJob
}

type workerJob struct {
	f     func()
	done  chan struct{}
	panic any // what f panicked with, re-raised on the caller's goroutine
}

func newWorkerPool(size int) *workerPool {
	return &workerPool{size: max(size, 1), jobs: make(chan *workerJob)}
}

// run runs f on an idle worker, or on the calling goroutine when none is
// idle, and returns when f has. A panic in f is raised again in the caller,
// where the server's recovery (recoverPanics) answers it; its message
// carries the worker's stack.
func (p *workerPool) run(f func()) {
	p.start.Do(func() {
		for range p.size {
			go p.work()
		}
	})
	j := &workerJob{f: f, done: make(chan struct{})}
	select {
	case p.jobs <- j:
		<-j.done
		if j.panic != nil {
			panic(j.panic)
		}
	default:
		f()
	}
}

func (p *workerPool) work() {
	for j := range p.jobs {
		j.runCatching()
	}
}

func (j *workerJob) runCatching() {
	defer close(j.done)
	defer func() {
		if v := recover(); v != nil {
			j.panic = fmt.Sprintf("%v\n[on a tool-call worker]\n%s", v, debug.Stack())
		}
	}()
	j.f()
}
