package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tree is a temporary folder holding a git work tree (repo, with a
// subfolder sub) and a plain folder outside it; git looks no higher than
// the temporary folder.
type tree struct{ outside, repo, sub string }

func newTree(t *testing.T) tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := tree{outside: filepath.Join(root, "plain"), repo: filepath.Join(root, "repo")}
	tr.sub = filepath.Join(tr.repo, "a", "b")
	for _, d := range []string{tr.outside, tr.sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	init := exec.Command("git", "init", "-q", tr.repo)
	init.Env = append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", root) // never the tree holding the temporary folder
	return tr
}

// TestTopLevelOf: inside a work tree, from a subdirectory, the answer is
// the tree's root; outside any, an error.
func TestTopLevelOf(t *testing.T) {
	tr := newTree(t)
	got, err := TopLevelOf(context.Background(), tr.sub)
	if err != nil || got != tr.repo {
		t.Fatalf("TopLevelOf(%s) = %q, %v; want %q", tr.sub, got, err, tr.repo)
	}
	if got, err := TopLevelOf(context.Background(), tr.outside); err == nil {
		t.Fatalf("outside a work tree: %q, want an error", got)
	}
}

// TestProjectKey: the one project key rule: from a subfolder of a work
// tree, the tree's root; outside any, the folder itself.
func TestProjectKey(t *testing.T) {
	tr := newTree(t)
	for dir, want := range map[string]string{tr.sub: tr.repo, tr.repo: tr.repo, tr.outside: tr.outside} {
		if got, err := ProjectKey(context.Background(), dir); err != nil || got != want {
			t.Errorf("ProjectKey(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	t.Chdir(tr.sub)
	if got, err := ProjectKey(context.Background(), ""); err != nil || got != tr.repo {
		t.Errorf("ProjectKey of the working directory %s = %q, %v; want %q", tr.sub, got, err, tr.repo)
	}
}

// TestProjectKeyAsksGitOnlyWhereARepoMayBe: outside any work tree (no .git
// from the folder up, no $GIT_DIR) no git process runs; inside one, and
// from a linked worktree (a .git file), git is asked as before, and the key
// is git's answer. A stand-in git on PATH records each run.
func TestProjectKeyAsksGitOnlyWhereARepoMayBe(t *testing.T) {
	tr := newTree(t)
	linked := filepath.Join(filepath.Dir(tr.repo), "linked")
	for _, args := range [][]string{{"-C", tr.repo, "commit", "-q", "--allow-empty", "-m", "x"}, {"-C", tr.repo, "worktree", "add", "-q", linked}} {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(tr.repo), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if mayBeInRepo(filepath.Dir(tr.outside)) {
		t.Skip("the temporary folder is itself inside a git work tree")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	runs := filepath.Join(bin, "runs")
	script := "#!/bin/sh\necho run >> " + runs + "\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	t.Setenv("GIT_DIR", "")
	os.Unsetenv("GIT_DIR")
	for _, c := range []struct {
		dir, want string
		asks      bool
	}{
		{tr.outside, tr.outside, false},
		{tr.sub, tr.repo, true},
		{linked, linked, true},
	} {
		os.Remove(runs)
		got, err := ProjectKey(context.Background(), c.dir)
		if err != nil || got != c.want {
			t.Errorf("ProjectKey(%s) = %q, %v; want %q", c.dir, got, err, c.want)
		}
		_, statErr := os.Stat(runs)
		if asked := statErr == nil; asked != c.asks {
			t.Errorf("ProjectKey(%s): git run %v, want %v", c.dir, asked, c.asks)
		}
	}
}
