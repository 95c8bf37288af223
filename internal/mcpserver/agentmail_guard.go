package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/gitrepo"
	"github.com/mailgate/mailgate/internal/guard"
)

// install_precommit_guard and uninstall_precommit_guard: the contract's
// tools for the commit guard (internal/guard; `mailgate guard` is the same
// for a human). Installing writes an executable hook, so where it may go is
// narrow: the top folder of a git work tree that is the project's own folder
// or inside it. An agent cannot put a hook into any other repository of
// the user's.

type amGuardInstallIn struct {
	amProjectArg
	CodeRepoPath string `json:"code_repo_path" jsonschema:"absolute path of the git repository to guard: the project's folder or a repository inside it"`
	amCompat
}

type amGuardUninstallIn struct {
	CodeRepoPath string `json:"code_repo_path" jsonschema:"absolute path of the git repository"`
	amCompat
}

type amGuardInstallOut struct {
	Hook *string `json:"hook"`
}

type amGuardUninstallOut struct {
	Removed bool `json:"removed"`
}

// guardBinary is the mailgate the hook runs (tests may stand in for it).
var guardBinary = func() (string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(bin)
}

func (t *amTools) installGuard(ctx context.Context, in amGuardInstallIn) (amGuardInstallOut, error) {
	proj, err := t.svc.ProjectDetail(ctx, in.ProjectKey)
	if err != nil {
		return amGuardInstallOut{}, err
	}
	repo, err := guardRepo(ctx, in.CodeRepoPath)
	if err != nil {
		return amGuardInstallOut{}, err
	}
	if problem := t.svc.ProjectFolderProblem(proj.HumanKey); problem != "" {
		return amGuardInstallOut{}, agentmail.Invalid("the project folder %s cannot take the guard: %s", proj.HumanKey, problem)
	}
	if !within(repo, proj.HumanKey) {
		return amGuardInstallOut{}, agentmail.Invalid("code_repo_path %q is not the project's folder %s nor inside it: the guard is installed only into the project's own repositories", repo, proj.HumanKey)
	}
	bin, err := guardBinary()
	if err != nil {
		return amGuardInstallOut{}, fmt.Errorf("finding mailgate's own path for the hook: %w", err)
	}
	hook, err := guard.Install(ctx, repo, bin, proj.HumanKey)
	if err != nil {
		return amGuardInstallOut{}, agentmail.Invalid("installing the guard in %s: %v", repo, err)
	}
	return amGuardInstallOut{Hook: &hook}, nil
}

func (t *amTools) uninstallGuard(ctx context.Context, in amGuardUninstallIn) (amGuardUninstallOut, error) {
	p := strings.TrimSpace(in.CodeRepoPath)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) && filepath.IsAbs(p) {
		return amGuardUninstallOut{Removed: false}, nil // nothing there, nothing installed
	}
	repo, err := guardRepo(ctx, p)
	if err != nil {
		return amGuardUninstallOut{}, err
	}
	// The contract names no project here: the repository must lie in one
	// the store knows whose folder passes the project rule, as for install.
	if err := t.inSomeProject(ctx, repo); err != nil {
		return amGuardUninstallOut{}, err
	}
	removed, err := guard.Uninstall(ctx, repo)
	if errors.Is(err, guard.ErrNotOurs) {
		return amGuardUninstallOut{Removed: false}, nil // someone else's hook: left alone
	}
	if err != nil {
		return amGuardUninstallOut{}, agentmail.Invalid("%v", err)
	}
	return amGuardUninstallOut{Removed: removed}, nil
}

// guardRepo checks that p is the absolute top folder of a git work tree
// and returns it cleaned.
func guardRepo(ctx context.Context, p string) (string, error) {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		return "", agentmail.Invalid("code_repo_path must be the repository's absolute path (got %q)", p)
	}
	p = filepath.Clean(p)
	top, err := gitrepo.TopLevelOf(ctx, p)
	if err != nil {
		return "", agentmail.Invalid("code_repo_path %q is not a git repository: %v", p, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || real != top {
		return "", agentmail.Invalid("code_repo_path %q is inside the repository %s: give its top folder", p, top)
	}
	return top, nil
}

// within reports whether dir is root or a folder inside it (after
// resolving symbolic links of both).
func within(dir, root string) bool {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// inSomeProject checks that repo is the folder of a project in the store,
// or inside one, and that the project's folder passes the project rule.
func (t *amTools) inSomeProject(ctx context.Context, repo string) error {
	projects, err := t.svc.ListProjects(ctx)
	if err != nil {
		return err
	}
	for _, p := range projects {
		if filepath.IsAbs(p.HumanKey) && within(repo, p.HumanKey) && t.svc.ProjectFolderProblem(p.HumanKey) == "" {
			return nil
		}
	}
	return agentmail.Invalid("code_repo_path %q is not the folder of a project (ensure_project) nor inside one: the guard is removed only from the projects' own repositories", repo)
}
