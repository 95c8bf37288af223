package childproc

import (
	"os/exec"
	"syscall"
)

// Tie makes the kernel send the child SIGTERM when mailgate dies, killed
// with SIGKILL included. A closed stdin or a cancelled context covers a
// clean stop, not a kill: tmux 3.3's control-mode client misses its stdin's
// EOF when mailgate is killed while the client is still attaching (about one
// kill in thirty right after start left it attached for ever, keeping the
// tmux server alive).
//
// Pdeathsig follows the thread that started the child; Go only ends a thread
// when a goroutine locked to it exits, which nothing that starts a child
// here does. Call Tie before cmd.Start; it keeps what SysProcAttr holds.
func Tie(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
