//go:build unix

package childproc

import (
	"os/exec"
	"syscall"
)

// Group starts the child in a process group of its own and makes
// cancelling its context (a timeout, mailgate stopping) kill the whole
// group: a shell's children, not only the shell. Use it with
// exec.CommandContext, before cmd.Start.
func Group(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		// The group's id is the child's pid (Setpgid with Pgid 0).
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
