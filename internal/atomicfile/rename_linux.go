//go:build linux

package atomicfile

import "golang.org/x/sys/unix"

// renameExcl is renameat2 RENAME_NOREPLACE.
func renameExcl(oldpath, newpath string) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
}

// exclUnsupported are renameExcl's errors where the filesystem does not
// support the flag.
var exclUnsupported = []error{unix.EINVAL, unix.ENOSYS}
