package agentmail

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeWorld is a base folder holding a mailgate home (with a token), a
// vault, a project (a work tree of its own, with links of every kind to the
// secrets) and a folder that is not a work tree.
type treeWorld struct {
	base, home, vault, proj, plain string
	protected                      []ProtectedPath
}

var secrets = []string{"TOKEN", "CREDENTIALS", "VAULTNOTE", "PENDING"}

func newTreeWorld(t testing.TB) treeWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := treeWorld{base: base, home: filepath.Join(base, "mg"), vault: filepath.Join(base, "vault"),
		proj: filepath.Join(base, "proj"), plain: filepath.Join(base, "plain")}
	w.protected = []ProtectedPath{{"mailgate's home", w.home}, {"the vault", w.vault}}
	for path, body := range map[string]string{
		filepath.Join(w.home, "auth", "token.json"):       "TOKEN",
		filepath.Join(w.home, "credentials.json"):         "CREDENTIALS",
		filepath.Join(w.home, "approvals", "pending.txt"): "PENDING",
		filepath.Join(w.vault, "note.md"):                 "VAULTNOTE",
		filepath.Join(w.proj, ".git", "HEAD"):             "ref: refs/heads/main\n",
		filepath.Join(w.proj, "in.txt"):                   "inside",
		filepath.Join(w.plain, "in.txt"):                  "plain",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Link(filepath.Join(w.home, "auth", "token.json"), filepath.Join(w.proj, "hard-token")))
	must(os.Symlink(filepath.Join(w.home, "auth", "token.json"), filepath.Join(w.proj, "leaf-token")))
	must(os.Symlink(filepath.Join(w.home, "auth"), filepath.Join(w.proj, "auth")))
	must(os.Symlink("../mg", filepath.Join(w.proj, "home")))
	must(os.Symlink(w.home, filepath.Join(base, "home-link")))
	return w
}

// TestProjectKeyProblem: /, the home, the vault, a folder holding them or
// inside them, and the user's home folder (or a folder holding it) are
// refused, as given or through a symbolic link; a project beside them is not.
func TestProjectKeyProblem(t *testing.T) {
	t.Parallel()
	w := newTreeWorld(t)
	userHome, _ := os.UserHomeDir()
	for _, c := range []struct {
		key, want string
	}{
		{"/", "it is the root folder"},
		{w.home, "it is mailgate's home"},
		{w.home + "/", "it is mailgate's home"},
		{w.home + "/auth/..", "it is mailgate's home"},
		{filepath.Join(w.home, "auth"), "it is inside mailgate's home"},
		{w.base, "it holds mailgate's home"},
		{filepath.Dir(w.base), "it holds mailgate's home"},
		{w.vault, "it is the vault"},
		{filepath.Join(w.base, "home-link"), "it is mailgate's home"},
		{filepath.Join(w.base, "home-link", "auth"), "it is inside mailgate's home"},
		{filepath.Join(w.proj, "auth"), "it is inside mailgate's home"},
		{userHome, "your home folder"},
		{w.proj, ""},
		{w.plain, ""},
		{"/data/projects/app", ""},
	} {
		got := ProjectKeyProblem(c.key, w.protected)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.key, got, c.want)
		}
	}
}

// TestReadAttachmentsProjectTree: attachments are read only inside a
// project's own tree, never from a folder that is /, the home, the vault or
// holds them (a store made before ensure_project refused them may hold such
// a project), never a folder without .git, never through a hard link or a
// symbolic link (leaf or parent) out of the project.
func TestReadAttachmentsProjectTree(t *testing.T) {
	t.Parallel()
	w := newTreeWorld(t)
	for _, c := range []struct {
		dir, path, want string
	}{
		{"/", "etc/passwd", "the root folder"},
		{"/", "/etc/passwd", "the root folder"},
		{w.home, "auth/token.json", "is not one: it is mailgate's home"},
		{w.base, "mg/auth/token.json", "it holds mailgate's home"},
		{filepath.Join(w.home, "auth"), "token.json", "it is inside mailgate's home"},
		{filepath.Join(w.base, "home-link"), "auth/token.json", "it is mailgate's home"},
		{w.vault, "note.md", "it is the vault"},
		{w.plain, "in.txt", "it has no .git at its top"},
		{w.proj, "hard-token", "it has 2 hard links"},
		{w.proj, "leaf-token", "is outside the project"},
		{w.proj, "auth/token.json", "is outside the project"},
		{w.proj, "home/credentials.json", "is outside the project"},
		{w.proj, "../mg/auth/token.json", "is outside the project"},
		{w.proj, filepath.Join(w.home, "auth", "token.json"), "is outside the project"},
	} {
		as, err := readAttachments(c.dir, []string{c.path}, w.protected)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s in %s: %v (%d read), want %q", c.path, c.dir, err, len(as), c.want)
		}
	}
	if as, err := readAttachments(w.proj, []string{"in.txt"}, w.protected); err != nil || string(as[0].Data) != "inside" {
		t.Fatalf("a file of the project: %v", err)
	}
}

// FuzzProjectTree: whatever project folder and attachment path an agent
// names, no protected file is ever read, and a key ProjectKeyProblem
// accepts is neither /, nor a protected folder, nor one holding or inside it.
func FuzzProjectTree(f *testing.F) {
	for _, s := range [][2]string{{"proj", "in.txt"}, {"/", "/etc/passwd"}, {"mg", "auth/token.json"}, {".", "mg/credentials.json"},
		{"proj", "hard-token"}, {"proj", "leaf-token"}, {"proj", "auth/token.json"}, {"proj/../mg", "auth/token.json"},
		{"home-link", "auth/token.json"}, {"proj", "../vault/note.md"}, {"proj", "home/approvals/pending.txt"}, {"mg/auth", "token.json"}} {
		f.Add(s[0], s[1])
	}
	w := newTreeWorld(f)
	f.Fuzz(func(t *testing.T, key, path string) {
		dir := key
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(w.base, key)
		}
		if ProjectKeyProblem(dir, w.protected) == "" {
			clean := filepath.Clean(dir)
			for _, p := range []string{w.home, w.vault} {
				if clean == "/" || clean == p || strings.HasPrefix(p, clean+"/") || strings.HasPrefix(clean, p+"/") {
					t.Fatalf("key %q accepted: it is, holds or is inside %s", dir, p)
				}
			}
		}
		as, err := readAttachments(dir, []string{path}, w.protected)
		if err != nil {
			return
		}
		for _, s := range secrets {
			if bytes.Contains(as[0].Data, []byte(s)) {
				t.Fatalf("%q in %q read %q", path, dir, as[0].Data)
			}
		}
	})
}
