//go:build !unix

package agentmail

import "io/fs"

// ownedByMe cannot tell owners apart here; the .git rule still applies.
func ownedByMe(fs.FileInfo) bool { return true }

// linkCount cannot count hard links here (1).
func linkCount(fs.FileInfo) uint64 { return 1 }
