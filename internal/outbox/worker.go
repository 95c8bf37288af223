package outbox

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/retry"
)

// Sink is one consumer of the outbox.
type Sink interface {
	// Name is the sink's outbox name ("gmail", "archive").
	Name() string
	// Process does the work for it and returns what to record in the
	// transaction that removes the row (nil: nothing). It must be safe to
	// run again for an item whose earlier claim may have done the work
	// (it.Attempts > 1): that is what makes a crash harmless.
	Process(ctx context.Context, it Item) (record func(context.Context, *sql.Tx) error, err error)
}

// TransientError marks a failure that should clear up on its own (429,
// 5xx, a network error): the row is retried soon and the whole worker
// backs off, so an outage is not hammered. Wait is a server-given minimum.
type TransientError struct {
	Wait time.Duration
	Err  error
}

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// UnsureError marks a failure after which the work may or may not have
// been done: a Gmail insert that got no answer (a timeout, a dropped
// connection) or a 5xx, which Gmail can send after storing the copy. The
// row's next attempt first looks for the earlier one's result
// (Sink.Process with Attempts > 1); so that the look-up sees it, that
// attempt comes no sooner than one lease later, the time the design
// already gives a crashed claim's work to land. A short backoff instead
// let the look-up run before a slow insert landed, and the copy was
// inserted twice (seen in TestCrash under load).
type UnsureError struct{ Err error }

func (e *UnsureError) Error() string { return e.Err.Error() }
func (e *UnsureError) Unwrap() error { return e.Err }

// PermanentError marks a failure no retry can cure: a file name the file
// system refuses (too long, invalid), a value no header can carry. The row
// is reported once, at error level, and dropped from the outbox, instead
// of being retried every hour for ever.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// WorkerOptions tunes a Worker. Zero values select the defaults.
type WorkerOptions struct {
	Batch        int           // lanes: rows in flight at once, each lane claiming the next when done; default 8
	Poll         time.Duration // idle wait between claims; default 200ms (bounds the mirror lag when idle)
	BackoffMin   time.Duration // first wait after a transient failure; default 500ms
	BackoffMax   time.Duration // cap for transient failures; default 1m
	PermanentMax time.Duration // cap for failures that need a human (bad request, revoked grant); default 1h
	// DrainOnStop, when positive, makes stop process every row still due
	// (up to this long) before returning, instead of leaving them to the
	// next process: the archive's promise that a clean stop archives what
	// was sent. Zero: stop only finishes the rows in flight.
	DrainOnStop time.Duration
	Logger      *slog.Logger
}

func (o *WorkerOptions) defaults() {
	if o.Batch <= 0 {
		o.Batch = 8
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 500 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = time.Minute
	}
	if o.PermanentMax <= 0 {
		o.PermanentMax = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Worker drains one sink's outbox until its context ends.
type Worker struct {
	ob   *Outbox
	sink Sink
	o    WorkerOptions

	mu      sync.Mutex
	streak  int // consecutive transient failures, for the worker-wide pause
	pauseTo time.Time
}

// NewWorker returns a worker for sink over ob.
func NewWorker(ob *Outbox, sink Sink, o WorkerOptions) *Worker {
	o.defaults()
	return &Worker{ob: ob, sink: sink, o: o}
}

// Run processes rows until ctx is done. Store errors are logged and
// retried: the mirror must outlive a busy or briefly unavailable store.
func (w *Worker) Run(ctx context.Context) {
	// Batch lanes, each claiming one row at a time: a lane that finishes
	// claims the next row at once, instead of the whole batch waiting for
	// its slowest insert. Order within an agent thread still holds, because
	// Claim only hands out a thread's oldest row, and not while it is leased.
	var wg sync.WaitGroup
	for lane := range max(w.o.Batch, 1) {
		wg.Go(func() {
			// Stagger the idle polls so the lanes do not read in lockstep.
			sleep(ctx, w.o.Poll*time.Duration(lane)/time.Duration(max(w.o.Batch, 1)))
			w.lane(ctx)
		})
	}
	wg.Wait()
}

// Drain processes due rows one at a time, in order, until none is left or
// ctx ends; it returns ctx.Err() in the second case. A row that fails is
// rescheduled as usual and so no longer due: Drain does not wait for it.
func (w *Worker) Drain(ctx context.Context) error {
	for ctx.Err() == nil {
		items, err := w.ob.Claim(ctx, 1)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		for _, it := range items {
			w.one(ctx, it)
		}
	}
	return ctx.Err()
}

func (w *Worker) lane(ctx context.Context) {
	for ctx.Err() == nil {
		if d := w.pause(); d > 0 {
			sleep(ctx, d)
			continue
		}
		items, err := w.ob.Claim(ctx, 1)
		if err != nil {
			if ctx.Err() == nil {
				w.o.Logger.Warn("mirror: claiming outbox rows failed", "sink", w.sink.Name(), "err", err)
			}
			sleep(ctx, w.o.Poll)
			continue
		}
		if len(items) == 0 {
			sleep(ctx, w.o.Poll)
			continue
		}
		for _, it := range items {
			w.one(ctx, it)
		}
	}
}

// one processes a claimed item within its lease: the deadline ends the
// work before another worker may claim the row, which keeps two workers
// from inserting the same message at once.
func (w *Worker) one(ctx context.Context, it Item) {
	pctx, cancel := context.WithTimeout(ctx, w.ob.Lease()*3/4)
	record, err := w.sink.Process(pctx, it)
	cancel()
	// Bookkeeping must land even while shutting down: a finished insert
	// that is not recorded costs a search on the next claim.
	bctx, bcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer bcancel()
	if err == nil {
		if err = w.ob.Done(bctx, it, record); err == nil {
			w.succeeded()
			return
		}
	}
	var pe *PermanentError
	if errors.As(err, &pe) {
		w.o.Logger.Error("mirror: message can never be copied; dropped from the queue", "sink", w.sink.Name(),
			"message", it.MessageID, "err", err)
		derr := w.ob.Done(bctx, it, nil)
		if derr == nil {
			return
		}
		err = derr // the row stays, and is retried as any failure
	}
	delay := w.failed(it, err)
	if ctx.Err() != nil {
		delay = 0 // shutting down: let the next process pick it up at once
	}
	if ue := (*UnsureError)(nil); errors.As(err, &ue) {
		delay = max(delay, w.ob.Lease()) // even at shutdown: see UnsureError
	}
	if rerr := w.ob.Retry(bctx, it, delay, err); rerr != nil {
		w.o.Logger.Warn("mirror: could not reschedule; the lease will expire and the row be retried", "sink", w.sink.Name(), "message", it.MessageID, "err", rerr)
	}
}

func (w *Worker) succeeded() {
	w.mu.Lock()
	w.streak, w.pauseTo = 0, time.Time{}
	w.mu.Unlock()
}

// failed decides the row's delay and, for transient failures, pauses the
// whole worker for the same time: during a 503 storm one probe goes out per
// backoff period instead of one per row.
func (w *Worker) failed(it Item, err error) time.Duration {
	var te *TransientError
	if errors.As(err, &te) {
		w.mu.Lock()
		w.streak++
		d := max(retry.Policy{Initial: w.o.BackoffMin, Max: w.o.BackoffMax}.Nth(w.streak), te.Wait)
		if t := time.Now().Add(d); t.After(w.pauseTo) {
			w.pauseTo = t
		}
		w.mu.Unlock()
		w.o.Logger.Info("mirror: transient failure, backing off", "sink", w.sink.Name(), "message", it.MessageID,
			"attempt", it.Attempts, "wait", d, "err", err)
		return d
	}
	// The row's attempts are counted in the outbox, so its next try is
	// scheduled there rather than slept for.
	d := retry.Policy{Initial: w.o.BackoffMin, Max: w.o.PermanentMax}.Nth(it.Attempts)
	w.o.Logger.Warn("mirror: message could not be mirrored; will retry", "sink", w.sink.Name(), "message", it.MessageID,
		"attempt", it.Attempts, "wait", d, "err", err)
	return d
}

func (w *Worker) pause() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Until(w.pauseTo)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
