package approval

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// renameCheckFirst is the fallback for filesystems without a no-replace
// rename: a plain rename(2) after checking the target is free. It is NOT a
// link+unlink pair: that leaves a window in which both names exist, and a
// crash inside it would leave a consumed approval in Approved/. The source
// side stays atomic (only one caller can move it); the target names mailgate
// uses are unique, so the check only guards against the improbable.
func renameCheckFirst(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	}
	return os.Rename(oldpath, newpath)
}

// writeAtomic writes data to path via a temporary file in the same folder:
// write, fsync, rename. With replace false an existing path is left alone
// and the error satisfies errors.Is(err, fs.ErrExist). Readers therefore see
// the old file or the new one, never a torn one, and a crash leaves at most
// a hidden ".tmp-" file behind. The folder is not fsynced: after a power
// loss the rename may be undone, which for every file written this way (a
// request, an outcome, a dev log) leaves the previous, still valid, state.
// The one rename that must be durable, Claim's, syncs its folders itself.
func writeAtomic(path string, data []byte, replace bool) error {
	dir := filepath.Dir(path)
	tmp := filepath.Join(dir, tmpPrefix+randomHex(8))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		if replace {
			werr = os.Rename(tmp, path)
		} else {
			werr = renameNoReplace(tmp, path)
		}
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

// WriteFile writes data to path as writeAtomic does, replacing what is
// there: for the other files mailgate keeps in the vault (the agent-mail
// archive), which a human's editor, git or another process may read at any
// moment.
func WriteFile(path string, data []byte) error { return writeAtomic(path, data, true) }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("reading random bytes: %v", err))
	}
	return hex.EncodeToString(b)
}

func isExist(err error) bool { return errors.Is(err, fs.ErrExist) }
