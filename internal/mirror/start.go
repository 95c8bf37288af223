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
// released, so a clean shutdown leaves no row to wait out a lease.
func Start(ctx context.Context, db *store.DB, sink Sink, lease time.Duration, o WorkerOptions) (stop func() error, err error) {
	ob, err := OpenOutbox(ctx, db, sink.Name(), lease)
	if err != nil {
		return nil, err
	}
	w := NewWorker(ob, sink, o)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	var once sync.Once
	return func() error {
		once.Do(func() { cancel(); wg.Wait() })
		return nil
	}, nil
}

// StartGmail starts the Gmail mirror over mb.
func StartGmail(ctx context.Context, db *store.DB, mb Mailbox, lease time.Duration, o WorkerOptions) (func() error, error) {
	stop, err := Start(ctx, db, &GmailSink{DB: db, Mailbox: mb}, lease, o)
	if err != nil {
		return nil, fmt.Errorf("starting the Gmail mirror: %w", err)
	}
	return stop, nil
}
