package testutil

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mailgate/mailgate/internal/filelock"
)

// Binary is a mailgate binary being built in the background (BuildMailgate).
type Binary struct {
	done    chan struct{}
	path    string
	err     error
	cleanup func()
}

// BuildMailgate is for a TestMain whose tests run the mailgate binary: the
// binary is $MAILGATE_BIN (make test builds it), or one built once for the
// whole run from pkg (the cmd/mailgate package, relative to the test's
// package: "." or "../mailgate"), in the background, so that the tests
// that need no binary run meanwhile: the go command's up-to-date check
// alone took ~1 s of wall time before the first test (more on a loaded
// machine). The built binary is kept between runs in the user's cache, in
// a folder of its own for each checkout (see cachedBuild); where that
// fails, it is built into a temporary folder that Cleanup removes. The go
// command runs with the environment of this call: a TestMain may move HOME
// away as soon as it returns.
func BuildMailgate(pkg string) *Binary {
	b := &Binary{done: make(chan struct{}), cleanup: func() {}}
	if path := os.Getenv("MAILGATE_BIN"); path != "" {
		b.path = path
		close(b.done)
		return b
	}
	env := os.Environ()
	go func() {
		defer close(b.done)
		b.path, b.cleanup, b.err = buildMailgate(pkg, env)
	}()
	return b
}

// Path waits for the build and returns the binary's path, or why there is
// none.
func (b *Binary) Path() (string, error) {
	<-b.done
	return b.path, b.err
}

// Cleanup waits for the build and removes a temporary binary.
func (b *Binary) Cleanup() {
	<-b.done
	b.cleanup()
}

func buildMailgate(pkg string, env []string) (path string, cleanup func(), err error) {
	if abs, err := filepath.Abs(pkg); err == nil {
		if path, err := cachedBuild(abs, env); err == nil {
			return path, func() {}, nil
		}
	}
	dir, err := os.MkdirTemp("", "mailgate-bin-")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "mailgate")
	if err := goBuild(pkg, path, env); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(dir) }, nil
}

// goBuild builds pkg into out. Without VCS stamping: the tests read no
// stamp, and the git commands it runs cost ~0.5 s of wall time even when
// the binary is up to date.
func goBuild(pkg, out string, env []string) error {
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out, pkg)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building mailgate: %w\n%s", err, b)
	}
	return nil
}

// cachedBuild builds the package in folder pkg (absolute) into the user's
// cache, at a path named after pkg, and returns that path. The go command
// links nothing when the binary there is up to date (its build ID matches
// the sources), and linking mailgate costs seconds of CPU in every package
// whose tests run it, on every run. A file lock makes concurrent test
// binaries (cmd/mailgate and cmd/mailgate-load run side by side) take
// turns: the second finds the first's binary up to date. A binary replaced
// while a test runs it is not disturbed: the go command moves the new one
// into place.
func cachedBuild(pkg string, env []string) (string, error) {
	dir, err := CacheDir(pkg, "bin")
	if err != nil {
		return "", err
	}
	unlock, err := filelock.Lock(filepath.Join(dir, "lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	path := filepath.Join(dir, "mailgate")
	if err := goBuild(pkg, path, env); err != nil {
		return "", err
	}
	return path, nil
}

// userCache is the user's cache folder, found when the test binary starts:
// a TestMain that points HOME at a throwaway folder afterwards (so no test
// reaches the real ~/.mailgate) must not move the cache into it, where it
// is deleted with the run and so never kept (cmd/mailgate's README
// walkthrough relinked mailgate on every run, ~3 s of CPU).
var userCache, userCacheErr = os.UserCacheDir()

// CacheDir returns a folder, created if needed, that is kept between test
// runs in the user's cache: <cache>/mailgate-test/<hash of key>/name. key
// is an absolute path of the checkout (so two checkouts never share one),
// name what the folder holds.
func CacheDir(key, name string) (string, error) {
	cache, err := userCache, userCacheErr
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(cache, "mailgate-test", hex.EncodeToString(sum[:8]), name)
	return dir, os.MkdirAll(dir, 0o700)
}

// RunOrChild is a TestMain for tests that re-execute the test binary as
// child processes (ChildCommand): with the variable env set, the process is
// such a child and exits with child's status, given env's value; otherwise
// it runs the tests as Main does.
func RunOrChild(m *testing.M, env string, child func(value string) int) {
	if v := os.Getenv(env); v != "" {
		os.Exit(child(v))
	}
	os.Exit(runTests(m))
}

// ChildCommand returns a command that re-executes the test binary as a
// child (RunOrChild) with these extra NAME=value variables; it runs no
// test, and its stderr is the test's.
func ChildCommand(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(exe, "-test.run=^$")
	c.Env = append(os.Environ(), env...)
	c.Stderr = os.Stderr
	return c
}

// RunChildren starts every command before waiting for any, so that they
// run at once, and fails the test when one cannot start or fails.
func RunChildren(t testing.TB, cmds ...*exec.Cmd) {
	t.Helper()
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
	}
}
