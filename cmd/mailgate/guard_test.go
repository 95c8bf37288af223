package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestGuardCommit: the commit guard end to end, with real git commits. An
// agent installs it through install_precommit_guard (the server is the
// built binary, so the hook runs it); a commit by BlueLake touching a file
// GreenDog holds exclusively is refused, naming the holder and the expiry;
// GreenDog's own commit passes; after the release BlueLake's passes; the
// override works; a hook that was there before keeps running and comes
// back on uninstall. On the store the run uses (SQLite, or PostgreSQL
// under make test-pg).
func TestGuardCommit(t *testing.T) {
	parallelLong(t, 1)
	testutil.NeedGit(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	home := filepath.Join(root, "home")
	env := []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn",
		"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES=" + root,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if dsn := storetest.PostgresURL(); dsn != "" {
		env = append(env, "MAILGATE_DB="+storetest.DSN(t))
	}
	git := func(extra []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, append(append([]string{}, env...), extra...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.MkdirAll(filepath.Join(repo, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := git(nil, "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	// A hook of the user's, already there: it must keep running.
	hooks := filepath.Join(repo, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	userHook := "#!/bin/sh\necho ran >> " + filepath.Join(root, "user-hook.log") + "\n"
	if err := os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte(userHook), 0o755); err != nil {
		t.Fatal(err)
	}

	w := &world{t: t, home: home, env: env}
	cs := w.connect()
	must := func(tool string, args map[string]any) string {
		t.Helper()
		text, isErr := call(t, cs, tool, args)
		if isErr {
			t.Fatalf("%s: %s", tool, text)
		}
		return text
	}
	must("ensure_project", map[string]any{"human_key": repo})
	for _, a := range []string{"GreenDog", "BlueLake"} {
		must("register_agent", map[string]any{"project_key": repo, "name": a, "program": "p", "model": "m"})
	}
	must("file_reservation_paths", map[string]any{"project_key": repo, "agent_name": "GreenDog", "paths": []string{"src/**"}, "exclusive": true, "reason": "TKT-1"})
	if text := must("install_precommit_guard", map[string]any{"project_key": repo, "code_repo_path": repo}); !strings.Contains(text, filepath.Join(hooks, "pre-commit")) {
		t.Fatalf("install_precommit_guard answered %s", text)
	}

	// Refusals: a repository outside the project, a folder that is no repository.
	other := filepath.Join(root, "other")
	if out, err := exec.Command("git", "init", "-q", other).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, c := range []struct{ path, want string }{
		{other, "not the project's folder"},
		{filepath.Join(root, "nowhere"), "not a git repository"},
		{"repo", "absolute path"},
	} {
		if text, isErr := call(t, cs, "install_precommit_guard", map[string]any{"project_key": repo, "code_repo_path": c.path}); !isErr || !strings.Contains(text, c.want) {
			t.Errorf("install into %s: (%v) %s; want a refusal saying %q", c.path, isErr, text, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(other, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was written into a repository outside the project")
	}

	commit := func(agent, file string, extra ...string) (string, error) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, file), []byte(agent+file), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := git(nil, "add", file); err != nil {
			t.Fatalf("git add: %v %s", err, out)
		}
		return git(append([]string{"AGENT_NAME=" + agent}, extra...), "commit", "-q", "-m", agent+" "+file)
	}

	out, err := commit("BlueLake", "src/a.go")
	if err == nil {
		t.Fatalf("BlueLake's commit of src/a.go, which GreenDog holds exclusively, went through:\n%s", out)
	}
	for _, want := range []string{"commit refused", "src/a.go  held by GreenDog (reservation src/**) until ", "MAILGATE_GUARD=off"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	// src/a.go is still staged: the holder commits it.
	if out, err := git([]string{"AGENT_NAME=GreenDog"}, "commit", "-q", "-m", "GreenDog src/a.go"); err != nil {
		t.Errorf("the holder's own commit was refused: %v\n%s", err, out)
	}
	if out, err := commit("BlueLake", "README.md"); err != nil {
		t.Errorf("a file nobody holds was refused: %v\n%s", err, out)
	}
	if out, err := commit("BlueLake", "src/b.go", "MAILGATE_GUARD=off"); err != nil {
		t.Errorf("MAILGATE_GUARD=off did not override: %v\n%s", err, out)
	}
	must("release_file_reservations", map[string]any{"project_key": repo, "agent_name": "GreenDog"})
	if out, err := commit("BlueLake", "src/c.go"); err != nil {
		t.Errorf("after the release, BlueLake's commit was refused: %v\n%s", err, out)
	}
	log, _ := os.ReadFile(filepath.Join(root, "user-hook.log"))
	if n := strings.Count(string(log), "ran"); n < 4 {
		t.Errorf("the user's own hook ran %d times over 5 commits; it must run before the guard on every one", n)
	}

	// The human's command removes it, and the user's hook is back as it was.
	if out, code := runIn(t, repo, env, "guard", "uninstall"); code != 0 || !strings.Contains(out, "Removed the commit guard") {
		t.Fatalf("mailgate guard uninstall: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(hooks, "pre-commit")); string(b) != userHook {
		t.Errorf("after uninstall the pre-commit hook is %q, want the user's own back", b)
	}
	if text := must("uninstall_precommit_guard", map[string]any{"code_repo_path": repo}); !strings.Contains(text, `"removed":false`) {
		t.Errorf("uninstalling again: %s", text)
	}
	// A repository outside every project is not the agents' to touch.
	if text, isErr := call(t, cs, "uninstall_precommit_guard", map[string]any{"code_repo_path": other}); !isErr || !strings.Contains(text, "not the folder of a project") {
		t.Errorf("uninstall outside the projects: (%v) %s", isErr, text)
	}
}
