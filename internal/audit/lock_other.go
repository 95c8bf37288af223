//go:build !unix

package audit

import "os"

// On platforms without flock the log relies on O_APPEND alone: single writes
// of ordinary entry size are not interleaved on local filesystems.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) {}
