//go:build !windows

package atomicfile

import (
	"io/fs"
	"path/filepath"

	"github.com/google/renameio/v2"
)

func write(path string, data []byte, perm fs.FileMode, replace bool) error {
	// The temporary file goes beside path: renameio would otherwise probe
	// $TMPDIR first, and a rename never crosses a filesystem.
	pf, err := renameio.NewPendingFile(path,
		renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(perm))
	if err != nil {
		return err
	}
	defer pf.Cleanup() // removes the temporary file unless it was renamed
	half := len(data) / 2
	if _, err := pf.Write(data[:half]); err != nil {
		return err
	}
	crashPoint("mid-write")
	if _, err := pf.Write(data[half:]); err != nil {
		return err
	}
	crashPoint("before-rename")
	if replace {
		return pf.CloseAtomicallyReplace()
	}
	if err := pf.Sync(); err != nil {
		return err
	}
	if err := pf.File.Close(); err != nil {
		return err
	}
	if err := RenameNoReplace(pf.Name(), path); err != nil {
		return err // Cleanup removes the temporary file
	}
	// Renamed: the temporary name is gone, and Cleanup's removal of it
	// (and its second Close) fail harmlessly.
	return nil
}
