package mirror

import "time"

// SetOutboxClock gives o the tests' clock, so that a lease lapses when the
// test says, not when a loaded machine happens to be slow.
func SetOutboxClock(o *Outbox, now func() time.Time) { o.now = now }
