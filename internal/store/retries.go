package store

import "sync/atomic"

// retries counts, for the whole process, the transactions run again after
// losing a race (Retry, and the agent-mail SQLite store's own loop), for
// the mailgate_store_tx_retries_total metric.
var retries atomic.Uint64

// CountRetry counts one transaction run again.
func CountRetry() { retries.Add(1) }

// Retries is how many transactions this process has run again.
func Retries() uint64 { return retries.Load() }
