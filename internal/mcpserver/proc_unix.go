//go:build unix

package mcpserver

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with pid runs on this host
// (signal 0 checks without signalling; EPERM means it exists, as another
// user's).
func processExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
