// Package atomicfile is the one way mailgate replaces a file: a reader, or a
// crash at any moment, sees the old content or the new, never half. It is
// github.com/google/renameio/v2 underneath (a temporary file in the same
// folder, written, fsynced, renamed over the target), plus what renameio
// does not offer: a no-replace variant for the approval vault, whose request
// names must never be overwritten, the sweep rule for leftovers, and Windows
// (renameio does not build there; write_windows.go does the same steps with
// the standard library, as well as that system allows).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// WriteFile replaces path with data, mode perm exactly (not masked by the
// umask, whatever mode an older file had: a token stays 0600). The folder
// must exist. The data is fsynced before the rename; the folder is not (see
// SyncDir): after a power loss the rename may be undone, leaving the
// previous, complete, file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, true)
}

// WriteNew creates path with data as WriteFile does, but never replaces an
// existing path: then the error satisfies errors.Is(err, fs.ErrExist) and
// nothing is left behind.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

// crashPoint lets the tests kill the process at a named point of a write;
// it does nothing otherwise.
var crashPoint = func(string) {}

// SyncDir makes the renames and creations in dir durable, where the system
// allows syncing a folder; where it does not, it returns nil.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // a folder cannot be opened for syncing there
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// IsTemp reports whether name (a base name) is one of the temporary files
// WriteFile and WriteNew write: renameio's "." + the target's name + a
// random number (a non-negative int64, so 12 digits or more but once in 10⁷
// writes). A process killed mid-write leaves one; readers of a folder skip
// dot files, and a sweep may remove the old ones.
func IsTemp(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	digits := len(name) - len(strings.TrimRight(name, "0123456789"))
	return digits >= 12 && len(name)-digits > 1
}

// TempGlob is the glob (path.Match, gitignore) of the names IsTemp
// recognises, for a list of what is never content.
const TempGlob = ".?*" + "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]"

// renameCheckFirst is the fallback for filesystems without a no-replace
// rename: a plain rename(2) after checking the target is free. It is NOT a
// link+unlink pair: that leaves a window in which both names exist, and a
// crash inside it would leave, say, a consumed approval in Approved/. The
// source side stays atomic (only one caller can move it); the target names
// mailgate uses are unique, so the check only guards against the improbable.
func renameCheckFirst(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}
