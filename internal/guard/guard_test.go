package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptQuotes: a binary path and a project key holding quotes,
// spaces and command substitutions reach `guard check` as they are, and
// run nothing.
func TestScriptQuotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd := filepath.Join(dir, "it's $(touch pwned) a bin")
	if err := os.MkdirAll(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(odd, "mailgate")
	args := filepath.Join(dir, "args")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+args+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := `/srv/o'dd "$(touch pwned)" key`
	hook := filepath.Join(dir, "pre-commit")
	if err := os.WriteFile(hook, []byte(Script(bin, key)), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hook)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(args)
	if want := "guard\ncheck\n--project\n" + key + "\n"; string(got) != want {
		t.Errorf("the hook ran the binary with %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a command substitution in a path was run")
	}
	off := exec.Command(hook)
	off.Env = append(os.Environ(), "MAILGATE_GUARD=off")
	os.Remove(args)
	if out, err := off.CombinedOutput(); err != nil || !strings.Contains(Script(bin, key), "MAILGATE_GUARD") {
		t.Fatalf("MAILGATE_GUARD=off: %v %s", err, out)
	}
	if _, err := os.Stat(args); err == nil {
		t.Error("MAILGATE_GUARD=off still ran the check")
	}
}
