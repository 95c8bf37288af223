// Package gitrepo is the adapter to git for the parts of mailgate that ask
// git something (today: where the working directory's repository starts).
// It runs the git binary, so its callers run no processes themselves and
// can be tested with a stand-in.
package gitrepo

import (
	"context"
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
	if top, err := TopLevelOf(ctx, dir); err == nil {
		return top, nil
	}
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// NotAbsoluteError is git's answer when it is not an absolute path (git for
// Windows under some shells answers C:/... or a Cygwin path).
type NotAbsoluteError struct{ Path string }

func (e *NotAbsoluteError) Error() string {
	return "git answered " + e.Path + " for the top level, not an absolute path"
}
