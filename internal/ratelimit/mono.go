package ratelimit

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Monotonic reads a clock that stepping the wall clock does not move: it
// returns the clock's name and a reading in milliseconds. Two readings with
// the same name are comparable, and their difference is the real time that
// passed between them; readings of different names are not comparable.
type Monotonic func() (clock string, ms int64)

// processClock is the fallback Monotonic: Go's monotonic clock, which is
// the process's own, named by a random token drawn at start.
var processClock = func() Monotonic {
	var b [8]byte
	_, _ = rand.Read(b[:])
	name, start := "proc:"+hex.EncodeToString(b[:]), time.Now()
	return func() (string, int64) { return name, time.Since(start).Milliseconds() }
}()
