//go:build !unix

// Package filelock is the one cross-process lock on a file that mailgate's
// read-merge-write files use. Where flock is unavailable it falls back to a
// process-wide lock: several processes writing one file at once are then
// not protected (the callers say what that costs them).
package filelock

import "sync"

var processLock sync.Mutex

// Lock takes the process-wide lock (path is not used) and returns its release.
func Lock(string) (func(), error) {
	processLock.Lock()
	return processLock.Unlock, nil
}
