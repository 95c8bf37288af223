// Package guard installs and removes mailgate's git pre-commit hook, the
// commit guard: a commit that touches a file another agent holds under an
// exclusive reservation is refused, naming the holder and when the
// reservation lapses. The hook is a short shell script that runs
// `mailgate guard check`, which asks git for the staged paths and the
// agent-mail store for the holders (agentmail.Service.CommitConflicts).
//
// A hook already in place is never lost: it is kept beside ours as
// pre-commit.mailgate-chained, ours runs it first, and uninstalling puts it
// back.
package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailgate/mailgate/internal/atomicfile"
	"github.com/mailgate/mailgate/internal/gitrepo"
)

const (
	hookName    = "pre-commit"
	chainedName = "pre-commit.mailgate-chained"
	// marker is the line that says a hook is ours.
	marker = "# mailgate pre-commit guard"
)

// ErrNotOurs is returned by Uninstall when the pre-commit hook in place is
// not mailgate's (it is left alone).
var ErrNotOurs = errors.New("the pre-commit hook there is not mailgate's; left as it is")

// Script is the hook's text: it runs the chained hook first, honours the
// documented override, then asks `binary guard check` about the project.
func Script(binary, projectKey string) string {
	return "#!/bin/sh\n" + marker + `: installed by mailgate guard install (or the
# install_precommit_guard tool); remove it with mailgate guard uninstall.
# A commit touching a file another agent holds exclusively (file_reservation_paths
# with exclusive=true) is refused. To commit anyway: MAILGATE_GUARD=off git commit ...
# (or git commit --no-verify). Your agent name comes from $AGENT_NAME.
chained="$(dirname "$0")/` + chainedName + `"
if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi
if [ "$MAILGATE_GUARD" = off ]; then exit 0; fi
bin=` + shellQuote(binary) + `
if [ ! -x "$bin" ]; then
  echo "mailgate guard: $bin is not there any more; reinstall the guard (mailgate guard install) or commit with MAILGATE_GUARD=off" >&2
  exit 1
fi
exec "$bin" guard check --project ` + shellQuote(projectKey) + `
`
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Install writes the hook into the work tree repo's hooks folder and
// returns its path. Installing again replaces our hook (a new binary path
// or project key) and keeps the chained one.
func Install(ctx context.Context, repo, binary, projectKey string) (string, error) {
	dir, err := gitrepo.HooksDir(ctx, repo)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the hooks folder: %w", err)
	}
	hook := filepath.Join(dir, hookName)
	ours, err := isOurs(hook)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case !ours:
		// Someone else's hook: it keeps running, before ours.
		chained := filepath.Join(dir, chainedName)
		if _, err := os.Lstat(chained); err == nil {
			return "", fmt.Errorf("%s exists already and %s is not mailgate's: move one of them away first", chained, hook)
		}
		if err := os.Rename(hook, chained); err != nil {
			return "", fmt.Errorf("keeping the existing hook: %w", err)
		}
	}
	if err := atomicfile.WriteFile(hook, []byte(Script(binary, projectKey)), 0o755); err != nil {
		return "", fmt.Errorf("installing the hook: %w", err)
	}
	return hook, nil
}

// Uninstall removes our hook from the work tree repo and puts back the
// hook it chained, if any. removed is false when there was no hook of ours.
func Uninstall(ctx context.Context, repo string) (removed bool, err error) {
	dir, err := gitrepo.HooksDir(ctx, repo)
	if err != nil {
		return false, err
	}
	hook := filepath.Join(dir, hookName)
	ours, err := isOurs(hook)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !ours:
		return false, fmt.Errorf("%s: %w", hook, ErrNotOurs)
	}
	if err := os.Remove(hook); err != nil {
		return false, err
	}
	chained := filepath.Join(dir, chainedName)
	if _, err := os.Lstat(chained); err == nil {
		if err := os.Rename(chained, hook); err != nil {
			return true, fmt.Errorf("putting back the hook that was there before: %w", err)
		}
	}
	return true, nil
}

// isOurs reports whether the file at path is mailgate's hook.
func isOurs(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return strings.Contains(string(b), "\n"+marker), nil
}
