//go:build !linux

package ratelimit

// SystemClock is, outside Linux, the process's own monotonic clock: slots
// this process took are aged exactly; other processes' slots by their wall
// time (future ones counted as taken now).
func SystemClock() (string, int64) { return processClock() }
