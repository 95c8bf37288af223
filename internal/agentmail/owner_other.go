//go:build !unix

package agentmail

import "io/fs"

// ownedByMe cannot tell owners apart here; the .git rule still applies.
func ownedByMe(fs.FileInfo) bool { return true }

// hardLinked cannot count links here.
func hardLinked(fs.FileInfo) bool { return false }
