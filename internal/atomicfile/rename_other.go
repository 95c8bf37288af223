//go:build !linux && !darwin

package atomicfile

// RenameNoReplace renames oldpath to newpath, failing with an error
// satisfying errors.Is(err, fs.ErrExist) instead of replacing an existing
// newpath (checked first: this system has no atomic no-replace rename).
func RenameNoReplace(oldpath, newpath string) error { return renameCheckFirst(oldpath, newpath) }
