//go:build darwin

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames oldpath to newpath atomically, failing with an
// error satisfying errors.Is(err, fs.ErrExist) instead of replacing an
// existing newpath (renameatx_np RENAME_EXCL).
func RenameNoReplace(oldpath, newpath string) error {
	err := unix.RenameatxNp(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_EXCL)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return renameCheckFirst(oldpath, newpath)
	}
	return err
}
