//go:build unix

package attach

import (
	"os"
	"syscall"
)

// readFlags open a resolved path without following a symlink swapped in
// since it was resolved (ELOOP) and without blocking on a FIFO.
const readFlags = os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// hardLinked reports whether a regular file has more than one name.
func hardLinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
