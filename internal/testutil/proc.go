package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// MailgateBinary is for a TestMain whose tests run the mailgate binary: it
// returns $MAILGATE_BIN (make test builds it), or a binary built once for
// the whole run from pkg (the cmd/mailgate package, relative to the test's
// package: "." or "../mailgate") into a temporary folder that cleanup
// removes. A failed build ends the process.
func MailgateBinary(pkg string) (path string, cleanup func()) {
	if path := os.Getenv("MAILGATE_BIN"); path != "" {
		return path, func() {}
	}
	dir, err := os.MkdirTemp("", "mailgate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	path = filepath.Join(dir, "mailgate")
	if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "building mailgate: %v\n%s", err, out)
		os.Exit(1)
	}
	return path, func() { os.RemoveAll(dir) }
}

// RunOrChild is a TestMain for tests that re-execute the test binary as
// child processes (ChildCommand): with the variable env set, the process is
// such a child and exits with child's status, given env's value; otherwise
// it runs the tests.
func RunOrChild(m *testing.M, env string, child func(value string) int) {
	if v := os.Getenv(env); v != "" {
		os.Exit(child(v))
	}
	os.Exit(m.Run())
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
