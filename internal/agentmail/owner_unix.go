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
