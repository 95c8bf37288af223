package testutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memoryFS is a memory filesystem with room for the tests' temporary
// files, or "".
func memoryFS() string {
	const dir = "/dev/shm"
	const tmpfsMagic = 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	if int64(st.Bavail)*int64(st.Bsize) < 1<<30 {
		return ""
	}
	return dir
}

// sweepMemoryTemp removes the MemoryTemp folders in fs that a killed test
// binary left (a timeout, ^C twice, kill -9: its cleanup never ran), which
// otherwise hold memory until the machine restarts: those whose pid is no
// longer running and that nothing has changed for ten minutes (a folder a
// live run's child still writes in is left).
func sweepMemoryTemp(fs string) {
	entries, err := os.ReadDir(fs)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), memoryTempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < 10*time.Minute {
			continue
		}
		os.RemoveAll(filepath.Join(fs, e.Name()))
	}
}
