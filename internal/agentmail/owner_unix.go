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

// hardLinked reports whether a regular file has other names (a hard link):
// one of them may be outside the project (a token, a key), so its bytes
// are not the project's to send.
func hardLinked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
