package sqlite

import "time"

// SetIndexDelay changes how long st's indexer waits after a commit, so tests
// can hold messages in the queue.
func SetIndexDelay(st *Store, d time.Duration) { st.idx.delay = d }
