package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTopLevelOf: inside a work tree, from a subdirectory, the answer is
// the tree's root; outside any, an error.
func TestTopLevelOf(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "plain")
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	for _, d := range []string{outside, sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	init := exec.Command("git", "init", "-q", repo)
	init.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", root) // never the tree holding the temporary folder
	got, err := TopLevelOf(context.Background(), sub)
	if err != nil || got != repo {
		t.Fatalf("TopLevelOf(%s) = %q, %v; want %q", sub, got, err, repo)
	}
	if got, err := TopLevelOf(context.Background(), outside); err == nil {
		t.Fatalf("outside a work tree: %q, want an error", got)
	}
}

// TestProjectKey: the one project key rule: from a subfolder of a work
// tree, the tree's root; outside any, the folder itself.
func TestProjectKey(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "plain")
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "a", "b")
	for _, d := range []string{outside, sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	init := exec.Command("git", "init", "-q", repo)
	init.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", root)
	for dir, want := range map[string]string{sub: repo, repo: repo, outside: outside} {
		if got, err := ProjectKey(context.Background(), dir); err != nil || got != want {
			t.Errorf("ProjectKey(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	t.Chdir(sub)
	if got, err := ProjectKey(context.Background(), ""); err != nil || got != repo {
		t.Errorf("ProjectKey of the working directory %s = %q, %v; want %q", sub, got, err, repo)
	}
}
