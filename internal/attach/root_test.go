package attach

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// swapForSymlink renames dir aside and puts a symlink to target in its
// place: what a local process racing mailgate would do.
func swapForSymlink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+"-moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// TestOpenParentSwappedForSymlink is issue 32's item 7: the folder check
// was EvalSymlinks then open, so a parent swapped for a symlink between
// the two was followed and a file outside the folder read. The swap is
// made deterministic by the beforeOpen hook (between the check and the
// open); the file is now opened through an os.Root of the folder, which
// refuses the escape.
func TestOpenParentSwappedForSymlink(t *testing.T) {
	f, real, secret := setup(t)
	write(t, filepath.Join(secret, "notes.txt"), "PRIVATE KEY")
	for _, tt := range []struct {
		name string
		path string
	}{
		{"relative", "sub/notes.txt"},
		{"absolute", filepath.Join(real, "sub", "notes.txt")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			beforeOpen = func(string) { swapForSymlink(t, filepath.Join(real, "sub"), secret) }
			t.Cleanup(func() {
				beforeOpen = nil
				os.Remove(filepath.Join(real, "sub"))
				os.Rename(filepath.Join(real, "sub-moved"), filepath.Join(real, "sub"))
			})
			files, err := f.Open([]string{tt.path})
			if err == nil {
				t.Fatalf("read through a swapped parent: %+v", files)
			}
			if !errors.Is(err, ErrOutside) {
				t.Errorf("error %v, want ErrOutside", err)
			}
		})
	}
	// Load of a file bound before the swap: refused the same way.
	files, err := f.Open([]string{"sub/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	beforeOpen = func(string) { swapForSymlink(t, filepath.Join(real, "sub"), secret) }
	defer func() { beforeOpen = nil }()
	if data, err := f.Load(files[0]); err == nil || strings.Contains(string(data), "PRIVATE") {
		t.Fatalf("Load through a swapped parent: %q, %v", data, err)
	}
}

// TestSaveFolderSwappedForSymlink: the downloads folder swapped for a
// symlink to elsewhere, before Save or between its check and the file's
// creation, never gets a file written through it.
func TestSaveFolderSwappedForSymlink(t *testing.T) {
	home, elsewhere := t.TempDir(), t.TempDir()
	d := Downloads{Dir: DownloadDir(home)}
	if _, err := d.Save("first.txt", []byte("1")); err != nil {
		t.Fatal(err)
	}
	// During: after the folder was checked, before the file is created.
	saveHook = func() { swapForSymlink(t, d.Dir, elsewhere); saveHook = nil }
	defer func() { saveHook = nil }()
	_, _ = d.Save("during.txt", []byte("2"))
	// Before: the folder is a symlink when Save starts.
	if _, err := d.Save("before.txt", []byte("3")); err == nil {
		t.Error("saved into a download folder that is a symlink")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("written outside the download folder: %v", ents)
	}
}
