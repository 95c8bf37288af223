package mirror

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
// o.DrainOnStop it also processes the rows still due, within that time,
// and logs how many were left when it could not (the next process takes
// them: nothing is lost).
func Start(ctx context.Context, db *store.DB, sink Sink, lease time.Duration, o WorkerOptions) (stop func() error, err error) {
	ob, err := OpenOutbox(ctx, db, sink.Name(), lease)
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
			if w.o.DrainOnStop <= 0 {
				return
			}
			// The process is stopping (a signal may have ended parent):
			// the drain gets its own, bounded, time.
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(parent), w.o.DrainOnStop)
			defer dcancel()
			if err := w.Drain(dctx); err != nil {
				n, _ := ob.Pending(context.WithoutCancel(parent))
				w.o.Logger.Warn("mirror: stopping before the queue was drained; the next mailgate process will finish it",
					"sink", sink.Name(), "pending", n, "waited", w.o.DrainOnStop, "err", err)
			}
		})
		return nil
	}, nil
}

// StartGmail starts the Gmail mirror of the agent mail msgs reads into mb.
func StartGmail(ctx context.Context, db *store.DB, msgs Messages, mb Mailbox, lease time.Duration, o WorkerOptions) (func() error, error) {
	stop, err := Start(ctx, db, &GmailSink{DB: db, Messages: msgs, Mailbox: mb}, lease, o)
	if err != nil {
		return nil, fmt.Errorf("starting the Gmail mirror: %w", err)
	}
	return stop, nil
}
