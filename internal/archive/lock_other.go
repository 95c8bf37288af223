//go:build !unix

package archive

import "sync"

var processLock sync.Mutex

// lockFile falls back to a process-wide lock where flock is unavailable:
// several processes writing one thread's digest at once are then not
// protected, but the outbox already hands a thread's messages out one at a
// time.
func lockFile(string) (func(), error) {
	processLock.Lock()
	return processLock.Unlock, nil
}
