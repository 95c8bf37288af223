package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk runs each request on a goroutine of its own, which starts on a
// small stack: a tool call (argument decoding, the store's SQLite, which is
// C translated to Go and calls deep, the answer's encoding) then grows it
// by copying, several doublings per call, 6–7% of the stdio server's CPU
// per send_message (BENCHMARKS.md, issue 29). onWorkers runs tool calls on
// long-lived goroutines instead, whose stacks have grown already.

// maxIdleWorkers bounds the goroutines kept waiting for the next call; a
// burst beyond them runs on new goroutines, which end after their call.
const maxIdleWorkers = 8

// workerPool hands functions to idle long-lived goroutines, starting a new
// one when none is idle, so a call never waits for another to finish.
type workerPool struct {
	idle chan chan func()
}

func newWorkerPool() *workerPool {
	return &workerPool{idle: make(chan chan func(), maxIdleWorkers)}
}

// run runs f on a worker.
func (p *workerPool) run(f func()) {
	select {
	case w := <-p.idle:
		w <- f
	default:
		go p.work(f)
	}
}

// work runs f, then waits (idle) for more, unless enough workers wait.
func (p *workerPool) work(f func()) {
	w := make(chan func())
	for {
		f()
		select {
		case p.idle <- w:
		default:
			return
		}
		f = <-w
	}
}

// onWorkers runs tools/call, and everything inside it, on p's workers; the
// request's goroutine waits for the answer, so ordering, cancellation (ctx)
// and what the caller sees are unchanged. A panic must not escape to the
// worker: recoverPanics belongs inside this middleware.
func onWorkers(p *workerPool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			var res mcp.Result
			var err error
			done := make(chan struct{})
			p.run(func() {
				defer close(done)
				res, err = next(ctx, method, req)
			})
			<-done
			return res, err
		}
	}
}
