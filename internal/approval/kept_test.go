package approval

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A kept file's name is a request's hash field: only a lower-case SHA-256
// names a file, whatever a request (or a caller that forgot to check) says.
func TestKeptNamesOnlyHashes(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	secret := filepath.Join(v.root, DirLogs, "secret.md")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("not for the page"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := sum([]byte("x"))
	for _, sha := range []string{"../secret", "../../Logs/secret", strings.ToUpper(good), good[:63], good + "0", ""} {
		if _, err := v.readKept(keptOriginal, sha); !errors.Is(err, ErrNoOriginal) {
			t.Errorf("readKept(%q) = %v, want ErrNoOriginal", sha, err)
		}
		if err := v.keep(keptOriginal, sha, []byte("x")); err == nil {
			t.Errorf("keep(%q) wrote a file", sha)
		}
	}
	if err := v.keep(keptOriginal, good, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if data, err := v.readKept(keptOriginal, good); err != nil || string(data) != "x" {
		t.Fatalf("readKept(good) = %q, %v", data, err)
	}
}
