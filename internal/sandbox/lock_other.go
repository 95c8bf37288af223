//go:build !unix

package sandbox

// lockFile has no cross-process lock where flock is unavailable: two
// sandbox servers of one home may then overwrite each other's changes (the
// last write wins); one server at a time is safe. Requests of one process
// are serialised by Mailbox.mu.
func lockFile(string) (func(), error) { return func() {}, nil }
