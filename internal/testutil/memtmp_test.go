package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryTemp: TMPDIR moves to a fresh folder on the memory filesystem
// and back; a TMPDIR already set or $MAILGATE_TEST_DISK_TMP keeps it.
func TestMemoryTemp(t *testing.T) {
	t.Setenv("TMPDIR", "")
	os.Unsetenv("TMPDIR")
	fs := memoryFS()
	if fs == "" {
		t.Skip("no memory filesystem with room here")
	}
	cleanup := MemoryTemp()
	dir := os.Getenv("TMPDIR")
	if filepath.Dir(dir) != fs || !strings.HasPrefix(filepath.Base(dir), "mailgate-test-") {
		t.Fatalf("TMPDIR %q, want a mailgate-test- folder in %s", dir, fs)
	}
	if got := t.TempDir(); !strings.HasPrefix(got, dir+string(filepath.Separator)) {
		t.Errorf("t.TempDir() = %q, not in %s", got, dir)
	}
	if again := MemoryTemp(); os.Getenv("TMPDIR") != dir {
		t.Errorf("a second MemoryTemp moved TMPDIR to %q", os.Getenv("TMPDIR"))
	} else {
		again()
	}
	cleanup()
	if v, ok := os.LookupEnv("TMPDIR"); ok {
		t.Errorf("TMPDIR still %q after cleanup", v)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s not removed: %v", dir, err)
	}

	t.Setenv(KeepDiskTemp, "1")
	os.Unsetenv("TMPDIR")
	MemoryTemp()()
	if v, ok := os.LookupEnv("TMPDIR"); ok {
		t.Errorf("with %s set, TMPDIR = %q", KeepDiskTemp, v)
	}
}
