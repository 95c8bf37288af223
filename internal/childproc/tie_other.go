//go:build !linux

package childproc

import "os/exec"

// Tie: only Linux can tie a child's life to its parent's; elsewhere a child
// ends when its stdin closes or its context is cancelled.
func Tie(*exec.Cmd) {}
