package testutil

import (
	"os"
	"strconv"
	"testing"
)

// KeepDiskTemp, set to any value, keeps TMPDIR on disk (MemoryTemp does
// nothing): to run the tests on the filesystem a user's data lives on.
const KeepDiskTemp = "MAILGATE_TEST_DISK_TMP"

// MemoryTemp points TMPDIR, and so t.TempDir and os.MkdirTemp, at a fresh
// folder on a memory filesystem for the rest of the test binary (and the
// processes it starts), and returns the func that removes the folder. It
// does nothing where there is no such filesystem with room to spare
// (memoryFS: Linux's /dev/shm with 1 GiB free; a container's is often
// 64 MiB), where TMPDIR is already set (the user's choice, or the parent
// test binary's), or with $MAILGATE_TEST_DISK_TMP set.
//
// Why: the tests create and delete many small files (temporary folders,
// SQLite stores, vault and audit files). On the development machine's
// ext4, each new inode cost a scan of the recently deleted ones
// (find_inode_bit, recently_deleted in perf), most of the system CPU of
// the packages that write files: internal/gate's test binary 1.4 -> 0.75
// CPU s, approval 0.86 -> 0.29, archive 1.7 -> 0.4. No test checks what a
// disk adds: what survives a killed process is in the page cache either
// way, power loss is not simulated, and the full-disk paths are injected
// (approval.Options.FaultWrite) or mount their own tmpfs.
func MemoryTemp() (cleanup func()) {
	if os.Getenv("TMPDIR") != "" || os.Getenv(KeepDiskTemp) != "" {
		return func() {}
	}
	fs := memoryFS()
	if fs == "" {
		return func() {}
	}
	sweepMemoryTemp(fs)
	dir, err := os.MkdirTemp(fs, memoryTempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return func() {}
	}
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return func() {}
	}
	return func() {
		os.Unsetenv("TMPDIR")
		os.RemoveAll(dir)
	}
}

// memoryTempPrefix begins a MemoryTemp folder's name, followed by the pid
// of the test binary that made it.
const memoryTempPrefix = "mailgate-test-"

// Main is a TestMain that runs the tests with their temporary files in
// memory (MemoryTemp) and fewer collections (FewerGCs(400)): the middle
// packages' test binaries, u+s CPU, GOGC 400 against 100, two interleaved
// rounds: 7.4-7.5 -> 6.1-6.7 s in all (internal/httpserver 1.05-1.19 ->
// 0.66-0.72).
func Main(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	FewerGCs(400)
	defer MemoryTemp()()
	return m.Run()
}
