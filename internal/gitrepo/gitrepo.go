// Package gitrepo is the adapter to git for the parts of mailgate that ask
// git something (today: where the working directory's repository starts).
// It runs the git binary, so its callers run no processes themselves and
// can be tested with a stand-in.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// timeout bounds one question to git: a hung git must not stall a server.
const timeout = 2 * time.Second

// TopLevel is the absolute path of the git work tree holding the process's
// working directory (git rev-parse --show-toplevel). It fails outside a
// repository, without git, or when git answers something else than an
// absolute path.
func TopLevel(ctx context.Context) (string, error) { return TopLevelOf(ctx, "") }

// TopLevelOf is TopLevel for the directory dir ("" = the working directory).
func TopLevelOf(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	top := strings.TrimSpace(string(out))
	if !strings.HasPrefix(top, "/") {
		return "", &NotAbsoluteError{Path: top}
	}
	return top, nil
}

// ProjectKey is the agent-mail project key of the directory dir ("" = the
// working directory): the top level of the git work tree holding it, so that
// every agent of a repository meets in one project whichever of its folders
// the agent's client was started in, else dir itself, absolute. It is the
// one rule for the key: the compatibility sets' default project, `mailgate
// mailbox` and `mailgate agents-snippet` all take it from here.
func ProjectKey(ctx context.Context, dir string) (string, error) {
	abs, err := absDir(dir)
	if err != nil {
		return "", err
	}
	if mayBeInRepo(abs) {
		if top, err := TopLevelOf(ctx, dir); err == nil {
			return top, nil
		}
	}
	return abs, nil
}

// absDir is dir absolute ("" = the working directory).
func absDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// mayBeInRepo reports whether git could find a work tree holding the
// absolute folder dir: some folder from dir up to the root has a .git entry
// (a repository, or the file of a worktree or submodule), or $GIT_DIR names
// one. Where neither holds, git rev-parse only fails, and the process it
// costs (a few ms; mailgate serve asks at every start, most often from "/",
// where Claude Desktop starts it) is saved. Git's own limits on the search
// ($GIT_CEILING_DIRECTORIES, file system boundaries) only make it fail in
// more places, so they need no copy here.
func mayBeInRepo(dir string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return true
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return true // there, or unknown (permissions): ask git
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// NotAbsoluteError is git's answer when it is not an absolute path (git for
// Windows under some shells answers C:/... or a Cygwin path).
type NotAbsoluteError struct{ Path string }

func (e *NotAbsoluteError) Error() string {
	return "git answered " + e.Path + " for the top level, not an absolute path"
}

// HooksDir is the absolute folder git runs the hooks of the work tree dir
// from (core.hooksPath when set, else .git/hooks; a worktree's are its
// repository's).
func HooksDir(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("asking git for the hooks folder of %s: %w", dir, gitErr(err))
	}
	hooks := strings.TrimSpace(string(out))
	if !filepath.IsAbs(hooks) {
		return "", &NotAbsoluteError{Path: hooks}
	}
	return hooks, nil
}

// StagedPaths are the paths the commit being made in the work tree dir
// touches (added, changed, removed or renamed: both names of a rename),
// relative to the work tree's top.
func StagedPaths(ctx context.Context, dir string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "diff", "--cached", "--name-only", "--no-renames", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("asking git which files the commit touches: %w", gitErr(err))
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// gitErr adds what git said on stderr to its exit error.
func gitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}
