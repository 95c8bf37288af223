//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeTestDeps: make test's first step is make deps (.ci/deps.sh over
// the one list, .ci/test-packages), which CI's .ci/run calls too instead of
// a list of its own; with everything installed it does nothing, and when it
// may not install it stops with the one command that does. The list names
// every tool a test skips without.
func TestMakeTestDeps(t *testing.T) {
	parallel(t)
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if !regexp.MustCompile(`(?m)^test: deps `).MatchString(read("Makefile")) {
		t.Error("make test does not start with deps")
	}
	run := read(".ci/run")
	if !strings.Contains(run, "make deps") || strings.Contains(run, "apt-get") {
		t.Error(".ci/run does not call make deps, or keeps its own apt-get list")
	}
	list := read(".ci/test-packages")
	for _, pkg := range []string{"tmux", "postgresql", "curl", "git", "nodejs", "npm", "chromium-headless-shell"} {
		if !regexp.MustCompile(`(?m)^` + pkg + `\s`).MatchString(list) {
			t.Errorf(".ci/test-packages lacks %s", pkg)
		}
	}

	script, _ := filepath.Abs(filepath.Join("..", "..", ".ci", "deps.sh"))
	deps := func(list string) (string, int) {
		path := filepath.Join(t.TempDir(), "list")
		if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(script)
		cmd.Env = append(os.Environ(), "MAILGATE_DEPS_LIST="+path, "MAILGATE_DEPS_NO_INSTALL=1")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := deps("# all there\nsh sh a shell\n"); code != 0 || out != "" {
		t.Errorf("everything installed: exit %d, %q", code, out)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("no apt-get: the install command is Debian's")
	}
	out, code := deps("sh sh a shell\nno-such-pkg no-such-command for the test\n")
	if code != 1 || !strings.Contains(out, "sudo apt-get update && sudo apt-get install -y no-such-pkg") {
		t.Errorf("a missing package, no permission to install: exit %d\n%s", code, out)
	}
}
