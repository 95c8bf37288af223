package sqlite

import (
	"context"
	"time"
)

// SetIndexDelay changes how long st's indexer waits after a commit, so tests
// can hold messages in the queue.
func SetIndexDelay(st *Store, d time.Duration) { st.idx.delay = d }

// MergeSegments runs the indexer's merging of the full-text index now.
func MergeSegments(st *Store) error { return st.mergeSegments(context.Background(), nil) }
