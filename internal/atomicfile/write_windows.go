package atomicfile

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// write is renameio's steps for Windows, where renameio does not build:
// a temporary file beside path named as renameio names it (so IsTemp and
// the sweeps hold), written, synced, closed and renamed.
func write(path string, data []byte, perm fs.FileMode, replace bool) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.FormatInt(rand.Int64(), 10))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	half := len(data) / 2
	_, err = f.Write(data[:half])
	if err == nil {
		crashPoint("mid-write")
		_, err = f.Write(data[half:])
	}
	if err == nil {
		crashPoint("before-rename")
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if replace {
			err = os.Rename(tmp, path)
		} else {
			err = RenameNoReplace(tmp, path)
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
