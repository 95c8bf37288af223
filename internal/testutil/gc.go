package testutil

import (
	"os"
	"runtime/debug"
)

// FewerGCs is for the TestMain of a package whose tests allocate much and
// keep little (many servers, stores and sessions in one process, each
// short-lived): it lets the heap grow to percent % over the live data
// before a collection instead of Go's 100 %, trading some memory for the
// collector's CPU. internal/mcpserver's suite, 400 against 100, medians
// of interleaved runs on a shared two-core machine: 9.4 → 8.0 CPU s, its
// peak memory ~320 → ~410-610 MB. An explicit GOGC wins. Call it before
// m.Run.
func FewerGCs(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
