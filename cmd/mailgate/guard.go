package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/gitrepo"
	"github.com/mailgate/mailgate/internal/guard"
	"github.com/mailgate/mailgate/internal/store"
)

const guardUsage = `Usage:
  mailgate guard install [--repo DIR] [--project KEY]
                       write the pre-commit hook into the repository (default: the one holding the
                       working directory); a hook already there is kept and runs first
  mailgate guard uninstall [--repo DIR]
                       remove it (and put back the hook it kept)
  mailgate guard check [--project KEY]
                       what the hook runs: refuse (exit 1) when the staged files include one another
                       agent holds exclusively; the committing agent is $AGENT_NAME

The project key defaults to the repository's top folder, as agents-snippet gives it.
To commit past the guard: MAILGATE_GUARD=off git commit ... (or git commit --no-verify).
`

// guardCmd is the commit guard (the overview's hard block): exclusive
// reservations made binding at commit time.
func guardCmd(ctx context.Context, env *environment, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, "mailgate guard: say what to do: install, uninstall or check\n\n"+guardUsage)
		return errUsage
	}
	verb, rest := args[0], args[1:]
	fs := flag.NewFlagSet("guard "+verb, flag.ContinueOnError)
	repo := fs.String("repo", "", "the repository `DIR` (default: the one holding the working directory)")
	project := fs.String("project", "", "the agent-mail project `KEY` (default: the repository's top folder)")
	switch verb {
	case "install", "uninstall", "check":
	case "-h", "--help", "help":
		fmt.Fprint(env.stdout, guardUsage)
		return nil
	default:
		fmt.Fprintf(env.stderr, "mailgate guard: unknown subcommand %q: use install, uninstall or check\n\n%s", verb, guardUsage)
		return errUsage
	}
	cfg, err := loadConfig(fs, rest, env)
	if err != nil {
		return helpOrError(fs, err, env.stdout)
	}
	if fs.NArg() > 0 {
		return usageError("guard", "unexpected argument %q", fs.Arg(0))
	}
	top, err := gitrepo.TopLevelOf(ctx, *repo)
	if err != nil {
		where := *repo
		if where == "" {
			where = "the working directory"
		}
		return fmt.Errorf("%s is not inside a git work tree (%v): give --repo the repository's folder", where, err)
	}
	key := *project
	if key == "" {
		key = top
	}
	switch verb {
	case "install":
		bin, err := os.Executable()
		if err == nil {
			bin, err = filepath.EvalSymlinks(bin)
		}
		if err != nil {
			return fmt.Errorf("finding mailgate's own path for the hook: %w", err)
		}
		hook, err := guard.Install(ctx, top, bin, key)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "Installed the commit guard: %s\nA commit touching a file another agent holds exclusively in project %s is refused.\n"+
			"Agents commit as $AGENT_NAME; to commit past the guard: MAILGATE_GUARD=off git commit ... (or --no-verify).\n", hook, key)
		return nil
	case "uninstall":
		removed, err := guard.Uninstall(ctx, top)
		if errors.Is(err, guard.ErrNotOurs) {
			fmt.Fprintf(env.stdout, "No commit guard is installed in %s: %v.\n", top, err)
			return nil
		}
		if err != nil {
			return err
		}
		if removed {
			fmt.Fprintf(env.stdout, "Removed the commit guard from %s.\n", top)
		} else {
			fmt.Fprintf(env.stdout, "No commit guard was installed in %s.\n", top)
		}
		return nil
	}
	// check, run by the hook.
	ctx, cancel := context.WithTimeout(ctx, guardTimeout)
	defer cancel()
	paths, err := gitrepo.StagedPaths(ctx, top)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return nil
	}
	paths = relativeToProject(paths, top, key)
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("mailgate guard: opening the agent-mail store %s: %w (to commit anyway: MAILGATE_GUARD=off git commit ...)", store.Describe(cfg.DB), err)
	}
	defer db.Close()
	svc, err := amstore.NewService(ctx, db, agentmail.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("mailgate guard: opening the agent-mail store: %w", err)
	}
	defer svc.Close()
	me := strings.TrimSpace(env.getenv("AGENT_NAME"))
	conflicts, err := svc.CommitConflicts(ctx, key, me, paths)
	var ae *agentmail.Error
	if errors.As(err, &ae) && errors.Is(err, agentmail.ErrNotFound) {
		return nil // no such project in the store: nobody holds anything there
	}
	if err != nil {
		return err
	}
	if len(conflicts) == 0 {
		return nil
	}
	who := "you (no $AGENT_NAME set)"
	if me != "" {
		who = me
	}
	fmt.Fprintf(env.stderr, "mailgate guard: commit refused: it touches %d file(s) another agent holds exclusively (committing as %s):\n", len(conflicts), who)
	for _, c := range conflicts {
		fmt.Fprintf(env.stderr, "  %s  held by %s (reservation %s) until %s\n", c.Path, terminalSafe(c.Holder), terminalSafe(c.Pattern), c.ExpiresAt.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(env.stderr, "Ask the holder to release it (send_message), wait for it to lapse, or unstage those files.\n"+
		"To commit anyway: MAILGATE_GUARD=off git commit ... (or git commit --no-verify).\n")
	return errGuardRefused
}

// errGuardRefused ends a check that refused the commit: exit 1, the
// reasons already printed.
const errGuardRefused = exitStatus(1)

// relativeToProject makes paths relative to the work tree top relative to
// the project root when the project is a folder above the top; otherwise
// they are the project's already.
func relativeToProject(paths []string, top, key string) []string {
	if !filepath.IsAbs(key) || key == top {
		return paths
	}
	rel, err := filepath.Rel(key, top)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.ToSlash(filepath.Join(rel, p))
	}
	return out
}

// guardTimeout bounds the hook's whole check: a commit must never hang on
// an unreachable store.
const guardTimeout = 20 * time.Second
