package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A search's plan comes from am_messages's statistics: with them, a rare
// word is read through the GIN index and a common one by walking the
// project's newest messages (0.2–0.3 ms either way on the load mix's
// store); without them, or with statistics taken when the project was a
// fraction of its size, the planner takes the project for a few rows and
// reads all of it, testing each message (4 ms a search at 4,000 messages,
// growing with the project). Autovacuum refreshes them only once a tenth of
// the table has changed, and looks once a minute: a new store, or a project
// growing fast in a large one, runs on stale statistics for that long.
//
// So the store analyzes the table itself as its own sends grow it, on
// autovacuum's default thresholds without its minute's wait: once this
// process has inserted analyzeFirst messages, then each time it has
// inserted a tenth of the table's rows as the last analyze counted them (at
// least analyzeFirst), never more than once per analyzeEvery, one at a
// time, in the background. ANALYZE samples a bounded
// number of rows (30,000 by default), so each costs tens of milliseconds
// whatever the table's size; a role that does not own the table gets a
// warning and no statistics, as before.
const (
	analyzeFirst = 50
	analyzeEvery = 5 * time.Second
)

// analyzer schedules the ANALYZEs above.
type analyzer struct {
	mu       sync.Mutex
	inserted int64 // messages inserted by this process since the last analyze
	due      int64 // inserted count that calls for the next; 0: analyzeFirst
	last     time.Time
	running  bool
	closed   bool
	wg       sync.WaitGroup
	cancel   context.CancelFunc
	ctx      context.Context
}

// inserted notes n messages committed by this process and starts an
// analyze when one is due.
func (s *Store) inserted(n int) {
	a := &s.analyze
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inserted += int64(n)
	if a.running || a.closed || a.inserted < max(a.due, analyzeFirst) || time.Since(a.last) < analyzeEvery {
		return
	}
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(context.Background())
	}
	a.running, a.inserted = true, 0
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		ctx, cancel := context.WithTimeout(a.ctx, time.Minute)
		defer cancel()
		var rows float64
		_, err := s.db.ExecContext(ctx, `ANALYZE am_messages`)
		switch {
		case err == nil:
			// reltuples is -1 for a table never analyzed: then the first
			// threshold again.
			s.db.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'am_messages'::regclass`).Scan(&rows)
		case a.ctx.Err() == nil:
			// Not the store closing: said, since searches keep planning on
			// the old statistics until one succeeds (tried again when the
			// next is due).
			slog.Warn("agent mail: refreshing am_messages's statistics failed; searches plan on the old ones", "err", err)
		}
		a.mu.Lock()
		a.running, a.last, a.due = false, time.Now(), int64(rows/10)
		a.mu.Unlock()
	}()
}

// stop ends a running analyze and waits for it (Store.Close).
func (a *analyzer) stop() {
	a.mu.Lock()
	a.closed = true
	if a.cancel != nil {
		a.cancel()
	}
	a.mu.Unlock()
	a.wg.Wait()
}
