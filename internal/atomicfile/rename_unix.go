//go:build linux || darwin

package atomicfile

import "errors"

// RenameNoReplace renames oldpath to newpath atomically, failing with an
// error satisfying errors.Is(err, fs.ErrExist) instead of replacing an
// existing newpath (the system's no-replace rename, renameExcl). On a
// filesystem without it, the target is checked first (renameCheckFirst).
func RenameNoReplace(oldpath, newpath string) error {
	err := renameExcl(oldpath, newpath)
	for _, unsupported := range exclUnsupported {
		if errors.Is(err, unsupported) {
			return renameCheckFirst(oldpath, newpath)
		}
	}
	return err
}
