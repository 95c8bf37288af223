package outbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

// Start registers sink, then drains its outbox in a goroutine until stop
// is called (or ctx ends). stop waits for in-flight rows to be recorded or
// released, so a clean shutdown leaves no row to wait out a lease; with
// o.DrainOnStop it also processes the rows still due, within that time.
// Either way it then logs, with the count, what the outbox still holds (a
// backlog under load, rows waiting out a failure): the next process takes
// them, nothing is lost, and whoever reads the log of a stop knows what it
// left.
func Start(ctx context.Context, db *store.DB, sink Sink, lease time.Duration, o WorkerOptions) (stop func() error, err error) {
	ob, err := Open(ctx, db, sink.Name(), lease)
	if err != nil {
		return nil, err
	}
	w := NewWorker(ob, sink, o)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	var once sync.Once
	return func() error {
		once.Do(func() {
			cancel()
			wg.Wait()
			var drained error
			if w.o.DrainOnStop > 0 {
				// The process is stopping (a signal may have ended parent):
				// the drain gets its own, bounded, time.
				dctx, dcancel := context.WithTimeout(context.WithoutCancel(parent), w.o.DrainOnStop)
				drained = w.Drain(dctx)
				dcancel()
			}
			w.logLeft(context.WithoutCancel(parent), drained)
		})
		return nil
	}, nil
}

// leftText says what a sink's queue holds, for the stop's log line.
var leftText = map[string]string{
	"gmail":   "agent-mail messages not yet mirrored into Gmail (the Gmail mirror's outbox)",
	"archive": "agent-mail messages not yet archived in the vault (the archive's queue)",
}

// logLeft logs what the outbox still holds when the worker stops: nothing
// at debug, a count at warn.
func (w *Worker) logLeft(ctx context.Context, drained error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	name := w.sink.Name()
	n, err := w.ob.Pending(ctx)
	if err != nil {
		w.o.Logger.Warn("mirror: stopping; could not count what the queue still holds", "sink", name, "err", err)
		return
	}
	if n == 0 {
		w.o.Logger.Debug("mirror: stopping with an empty queue", "sink", name)
		return
	}
	what := leftText[name]
	if what == "" {
		what = "messages queued for " + name
	}
	attrs := []any{"sink", name, "queued", n}
	if w.o.DrainOnStop > 0 {
		attrs = append(attrs, "drained_for", w.o.DrainOnStop)
		if drained != nil {
			attrs = append(attrs, "err", drained)
		}
	}
	w.o.Logger.Warn(fmt.Sprintf("mirror: stopping with %d %s; the next mailgate process finishes them (nothing is lost)", n, what), attrs...)
}
