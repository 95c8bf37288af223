//go:build darwin

package atomicfile

import "golang.org/x/sys/unix"

// renameExcl is renameatx_np RENAME_EXCL.
func renameExcl(oldpath, newpath string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_EXCL)
}

// exclUnsupported are renameExcl's errors where the filesystem does not
// support the flag.
var exclUnsupported = []error{unix.EINVAL, unix.ENOTSUP}
