//go:build unix

package approval

import (
	"os"
	"syscall"
)

// openNoFollow opens path read-only, failing (ELOOP) if its last component
// is a symlink, and without blocking if it is a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}

// freeBytes is the space an unprivileged writer may still use on dir's
// filesystem; ok is false when it cannot be told.
func freeBytes(dir string) (free int64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true // the field types differ between platforms
}
