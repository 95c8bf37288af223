//go:build linux

package approval

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames oldpath to newpath atomically, failing with EEXIST
// instead of replacing an existing newpath (renameat2 RENAME_NOREPLACE).
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The filesystem does not support the flag.
		return renameCheckFirst(oldpath, newpath)
	}
	return err
}
