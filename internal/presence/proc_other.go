//go:build !unix

package presence

// processExists cannot tell cheaply here: the heartbeat's age decides.
func processExists(pid int) bool { return true }
