//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCrashMidWriteLeavesOldFile kills a child process (SIGKILL, no
// deferred cleanup runs) in the middle of writing the new content and
// again with the new content complete but not yet renamed: both times the
// file holds the old content, with its mode, and the leftover is a
// temporary file IsTemp recognises.
func TestCrashMidWriteLeavesOldFile(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"mid-write", "before-rename"} {
		for _, fn := range []string{"WriteFile", "WriteNew"} {
			t.Run(fn+"/"+point, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				path := filepath.Join(dir, "token.json")
				if fn == "WriteFile" {
					if err := os.WriteFile(path, []byte("old token"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
				cmd.Env = append(os.Environ(), "ATOMICFILE_CRASH="+fn+","+point+","+path)
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("child: %v, want killed by SIGKILL", err)
				}
				switch got, err := os.ReadFile(path); {
				case fn == "WriteNew" && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("WriteNew killed: %s exists (%q, %v)", path, got, err)
				case fn == "WriteFile" && string(got) != "old token":
					t.Errorf("WriteFile killed: content %.40q (%v), want the old token", got, err)
				}
				entries, _ := os.ReadDir(dir)
				var temps int
				for _, e := range entries {
					if IsTemp(e.Name()) {
						temps++
					}
				}
				if temps != 1 {
					t.Errorf("%d temporary files recognised by IsTemp in %v, want the one left by the crash", temps, entries)
				}
			})
		}
	}
}

// TestCrashChild is the child of TestCrashMidWriteLeavesOldFile.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv("ATOMICFILE_CRASH")
	if spec == "" {
		t.Skip("run by TestCrashMidWriteLeavesOldFile")
	}
	parts := strings.SplitN(spec, ",", 3)
	fn, point, path := parts[0], parts[1], parts[2]
	crashPoint = func(p string) {
		if p == point {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	data := []byte(strings.Repeat("new token ", 1000))
	if fn == "WriteFile" {
		WriteFile(path, data, 0o600)
	} else {
		WriteNew(path, data, 0o600)
	}
	t.Fatal("not killed")
}
