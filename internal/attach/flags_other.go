//go:build !unix

package attach

import "os"

// readFlags: without O_NOFOLLOW, the Lstat before opening and the
// os.SameFile check after it stand in.
const readFlags = os.O_RDONLY

// hardLinked cannot count links here.
func hardLinked(os.FileInfo) bool { return false }
