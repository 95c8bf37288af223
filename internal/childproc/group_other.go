//go:build !unix

package childproc

import "os/exec"

// Group: without Unix process groups, cancelling kills the child alone.
func Group(*exec.Cmd) {}
