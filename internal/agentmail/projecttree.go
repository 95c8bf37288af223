package agentmail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A project's folder is where send_message reads attachment_paths from, so
// whatever an agent may name as a project it may read files of. Any agent
// can call ensure_project, so the folder must be one that holds nothing but
// the project: never /, never the user's home folder, never mailgate's own
// folders (its home with the Gmail token, credentials and pending requests;
// the vault) nor a folder holding one of them or inside one of them.
// ensure_project refuses such keys (ProjectKeyProblem); a store made before
// the rule may still hold one, so every read checks again (openProjectTree)
// and also asks that the folder be a project's own tree: a real directory
// owned by the user, with .git at its top.

// ProtectedPath is a file or folder of mailgate's that no project may be,
// hold, or lie inside.
type ProtectedPath struct {
	What string // how refusals name it: "mailgate's home", "the vault"
	Path string // absolute
}

// ProjectKeyProblem explains why the absolute path key cannot be a project
// folder given mailgate's protected paths, or returns "". It looks at the
// path as given and with its symbolic links resolved (when it exists), and
// at each protected path both ways too, so a link to the home is the home.
func ProjectKeyProblem(key string, protected []ProtectedPath) string {
	k := filepath.Clean(key)
	if !filepath.IsAbs(k) {
		return "" // not a local path (a Windows key on Unix): never read as a folder here
	}
	type named struct{ what, path string }
	var prot []named
	for _, p := range protected {
		if p.Path == "" || !filepath.IsAbs(p.Path) {
			continue
		}
		for _, f := range pathForms(p.Path) {
			prot = append(prot, named{p.What, f})
		}
	}
	userHome, _ := os.UserHomeDir()
	for _, f := range pathForms(k) {
		if f == filepath.Dir(f) {
			return "it is the root folder, which holds every file of this machine"
		}
		for _, p := range prot {
			switch {
			case f == p.path:
				return fmt.Sprintf("it is %s (%s), which holds what mailgate protects", p.what, p.path)
			case inside(p.path, f):
				return fmt.Sprintf("it holds %s (%s)", p.what, p.path)
			case inside(f, p.path):
				return fmt.Sprintf("it is inside %s (%s)", p.what, p.path)
			}
		}
		if userHome != "" {
			for _, h := range pathForms(filepath.Clean(userHome)) {
				if f == h || inside(h, f) {
					return fmt.Sprintf("it is your home folder or holds it (%s)", h)
				}
			}
		}
	}
	return ""
}

// pathForms is p cleaned, and resolved through symbolic links when it
// exists and differs.
func pathForms(p string) []string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
		return []string{p, r}
	}
	return []string{p}
}

// inside reports whether p lies strictly inside dir (lexically).
func inside(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && filepath.IsLocal(r)
}

// projectKeyError is ensure_project's refusal of a key that cannot be a
// project folder.
func projectKeyError(key, problem string) error {
	return newError("INVALID_ARGUMENT", ErrInvalidArgument,
		"Invalid project_key %q: %s. A project is the working directory of one code base (e.g. /data/projects/app): "+
			"not /, your home folder, mailgate's home or vault, nor a folder holding or inside one of them, "+
			"since agents may attach files from the project's folder.", key, problem)
}

// openProjectTree opens the project folder dir for reading the files an
// agent names, after checking it is a project's own tree: not refused by
// ProjectKeyProblem, a real directory owned by the user, with .git at its
// top. The checks are made on the directory actually opened (its identity
// is compared with the checked path's), and every file is then opened
// through the returned os.Root, which no "..", symbolic link or absolute
// path escapes. real is dir with its symbolic links resolved.
func openProjectTree(dir string, protected []ProtectedPath) (root *os.Root, real string, err error) {
	refuse := func(format string, args ...any) (*os.Root, string, error) {
		return nil, "", newError("INVALID_ARGUMENT", ErrInvalidArgument,
			"attachments are read only inside a project's own tree, and the project folder %s is not one: %s; mention the files by path in body_md instead",
			dir, fmt.Sprintf(format, args...))
	}
	if problem := ProjectKeyProblem(dir, protected); problem != "" {
		return refuse("%s", problem)
	}
	real, err = filepath.EvalSymlinks(dir)
	if err != nil {
		return refuse("it cannot be opened on this machine (%v)", unwrapPathErr(err))
	}
	if problem := ProjectKeyProblem(real, protected); problem != "" {
		return refuse("%s", problem)
	}
	root, err = os.OpenRoot(real)
	if err != nil {
		return refuse("it cannot be opened (%v)", unwrapPathErr(err))
	}
	fail := func(format string, args ...any) (*os.Root, string, error) {
		root.Close()
		return refuse(format, args...)
	}
	opened, err := root.Stat(".")
	if err != nil {
		return fail("it cannot be read (%v)", unwrapPathErr(err))
	}
	if checked, err := os.Lstat(real); err != nil || !os.SameFile(opened, checked) {
		return fail("it changed while being opened")
	}
	if !opened.IsDir() || !ownedByMe(opened) {
		return fail("it is not a directory owned by the user running mailgate")
	}
	if _, err := root.Lstat(".git"); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail("it has no .git at its top (a project is a repository or a worktree of its own)")
		}
		return fail("its .git cannot be read (%v)", unwrapPathErr(err))
	}
	return root, real, nil
}
