//go:build unix

package agentmail

import (
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe reports whether the file belongs to the effective user.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// linkCount is the number of hard links of the file (1 if unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
