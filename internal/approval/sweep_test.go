package approval

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestSweepTempRemovesOnlyOldLeftovers(t *testing.T) {
	t.Parallel()
	v, c := newVault(t, Options{})
	old, fresh := c.Now().Add(-2*time.Hour), c.Now().Add(-time.Minute)
	write := func(dir, name string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(v.Root(), dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		write(d, ".tmp-0123456789abcdef", old)                 // a killed writer's leftover (before atomicfile)
		write(d, ".EMAIL_SEND_abc.md7240412318890913151", old) // and atomicfile's (renameio's name)
		write(d, ".tmp-fedcba9876543210", fresh)               // may still be being written
		write(d, "EMAIL_SEND_abc.md", old)                     // a request: never the sweep's
		write(d, "tmp-notes.md", old)                          // the human's file
	}
	// Not regular files: left alone even with the prefix.
	if err := os.Mkdir(filepath.Join(v.Root(), DirDone, ".tmp-folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(v.Root(), DirDone, "EMAIL_SEND_abc.md")
	if err := os.Symlink(target, filepath.Join(v.Root(), DirApproved, ".tmp-link")); err != nil {
		t.Fatal(err)
	}

	n, err := v.SweepTemp(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("removed %d files, want 10 (two per folder)", n)
	}
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		names := listAll(t, filepath.Join(v.Root(), d))
		if slices.Contains(names, ".tmp-0123456789abcdef") || slices.Contains(names, ".EMAIL_SEND_abc.md7240412318890913151") {
			t.Errorf("%s: old leftover kept: %v", d, names)
		}
		for _, keep := range []string{".tmp-fedcba9876543210", "EMAIL_SEND_abc.md", "tmp-notes.md"} {
			if !slices.Contains(names, keep) {
				t.Errorf("%s: %s removed: %v", d, keep, names)
			}
		}
	}
	if !slices.Contains(listAll(t, filepath.Join(v.Root(), DirDone)), ".tmp-folder") {
		t.Error("a folder with the prefix was removed")
	}
	if !slices.Contains(listAll(t, filepath.Join(v.Root(), DirApproved)), ".tmp-link") {
		t.Error("a symlink with the prefix was removed")
	}

	// A second sweep finds nothing more.
	if n, err := v.SweepTemp(time.Hour); err != nil || n != 0 {
		t.Fatalf("second sweep: %d, %v", n, err)
	}
}

func TestSweepTempReportsUnreadableFolder(t *testing.T) {
	t.Parallel()
	v, c := newVault(t, Options{})
	p := filepath.Join(v.Root(), DirLogs, ".tmp-0123456789abcdef")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := c.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(v.Root(), DirDone)); err != nil {
		t.Fatal(err)
	}
	n, err := v.SweepTemp(time.Hour)
	if err == nil {
		t.Fatal("a missing Done/ was not reported")
	}
	if n != 1 {
		t.Fatalf("removed %d, want 1: one missing folder must not stop the others", n)
	}
}

func listAll(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
