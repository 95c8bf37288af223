package ratelimit

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Monotonic reads a clock that stepping the wall clock does not move: it
// returns the clock's name and a reading in milliseconds. Two readings with
// the same name are comparable, and their difference is the real time that
// passed between them; readings of different names are not comparable.
type Monotonic func() (clock string, ms int64)

// processClock is the fallback Monotonic: Go's monotonic clock, which is
// the process's own, named by a random token drawn at its first reading.
func processClock() (string, int64) {
	c := processMono()
	return c.name, time.Since(c.start).Milliseconds()
}

var processMono = sync.OnceValue(func() struct {
	name  string
	start time.Time
} {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return struct {
		name  string
		start time.Time
	}{"proc:" + hex.EncodeToString(b[:]), time.Now()}
})
