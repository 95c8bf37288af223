//go:build unix

package presence

import (
	"errors"
	"syscall"
)

// ProcessExists reports whether a process with pid runs on this host
// (signal 0 checks without signalling; EPERM means it exists, as another
// user's). Other packages that record a pid (mcpserver's sessions) ask
// here too.
func ProcessExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
