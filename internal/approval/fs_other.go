//go:build !linux && !darwin

package approval

func renameNoReplace(oldpath, newpath string) error { return renameCheckFirst(oldpath, newpath) }
