package testutil

import (
	"os/exec"
	"strings"
	"testing"
)

// NeedGit skips t where git is not installed.
func NeedGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// Git runs git in dir with a throwaway identity (a commit needs one, and
// the machine's may be unset) and returns its output, trimmed; an error
// fails t with what git said.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
