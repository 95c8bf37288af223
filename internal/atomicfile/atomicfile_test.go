package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileReplacesWithExactMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		old  fs.FileMode // 0: no file before
		perm fs.FileMode
	}{
		{"new token", 0, 0o600},
		{"token over a too open file", 0o644, 0o600},
		{"hook", 0o600, 0o755},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "f")
			if tc.old != 0 {
				if err := os.WriteFile(path, []byte("old"), tc.old); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.old); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, []byte("new"), tc.perm); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != "new" {
				t.Errorf("content %q, want new", got)
			}
			if fi.Mode().Perm() != tc.perm {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.perm)
			}
			assertNoTemp(t, filepath.Dir(path))
		})
	}
}

func TestWriteNewNeverReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "request.md")
	if err := WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := WriteNew(path, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second WriteNew: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Errorf("content %q, want first", got)
	}
	assertNoTemp(t, dir)
}

func TestRenameNoReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RenameNoReplace(a, b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("onto an existing file: %v, want fs.ErrExist", err)
	}
	if err := RenameNoReplace(a, filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "c")); string(got) != "a" {
		t.Errorf("c holds %q, want a", got)
	}
}

func TestIsTemp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want bool
	}{
		{".x.md7240412318890913151", true},
		{".tmp-0123456789ab", false}, // hex, not renameio's
		{".bashrc2", false},
		{".123456789012", false}, // nothing before the number
		{"x.md7240412318890913151", false},
		{".DS_Store", false},
	}
	for _, tc := range tests {
		if got := IsTemp(tc.name); got != tc.want {
			t.Errorf("IsTemp(%q) = %v, want %v", tc.name, got, tc.want)
		}
		if got, _ := path.Match(TempGlob, tc.name); got != tc.want {
			t.Errorf("TempGlob matches %q: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
