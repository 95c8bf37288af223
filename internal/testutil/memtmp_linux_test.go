package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSweepMemoryTemp: a folder a killed test binary left (its pid gone,
// untouched for ten minutes) is removed; one whose binary still runs, one
// changed recently, and anything not named by MemoryTemp are kept.
func TestSweepMemoryTemp(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	dead, live := strconv.Itoa(gone.Process.Pid), strconv.Itoa(os.Getpid())
	fs := t.TempDir()
	old := time.Now().Add(-11 * time.Minute)
	folders := []struct {
		name string
		old  bool
		kept bool
	}{
		{memoryTempPrefix + dead + "-123", true, false},
		{memoryTempPrefix + dead + "-456", false, true},
		{memoryTempPrefix + live + "-789", true, true},
		{memoryTempPrefix + "123456789", true, true}, // no pid-suffix shape: not ours
		{"other-" + dead + "-1", true, true},
	}
	for _, f := range folders {
		dir := filepath.Join(fs, f.name)
		if err := os.MkdirAll(filepath.Join(dir, "store"), 0o700); err != nil {
			t.Fatal(err)
		}
		if f.old {
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepMemoryTemp(fs)
	for _, f := range folders {
		_, err := os.Stat(filepath.Join(fs, f.name))
		if kept := err == nil; kept != f.kept {
			t.Errorf("%s: kept %v, want %v (%v)", f.name, kept, f.kept, err)
		}
	}
}
