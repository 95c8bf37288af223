//go:build linux

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames oldpath to newpath atomically, failing with an
// error satisfying errors.Is(err, fs.ErrExist) instead of replacing an
// existing newpath (renameat2 RENAME_NOREPLACE).
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The filesystem does not support the flag.
		return renameCheckFirst(oldpath, newpath)
	}
	return err
}
