// Package gitrepo is the adapter to git for the parts of mailgate that ask
// git something (today: where the working directory's repository starts).
// It runs the git binary, so its callers run no processes themselves and
// can be tested with a stand-in.
package gitrepo

import (
	"context"
	"os/exec"
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

// NotAbsoluteError is git's answer when it is not an absolute path (git for
// Windows under some shells answers C:/... or a Cygwin path).
type NotAbsoluteError struct{ Path string }

func (e *NotAbsoluteError) Error() string {
	return "git answered " + e.Path + " for the top level, not an absolute path"
}
