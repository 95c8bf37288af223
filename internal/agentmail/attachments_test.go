package agentmail

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// attachmentWorld is a project directory with a file inside, a secret
// outside, and links of every kind between them.
func attachmentWorld(t testing.TB) (proj, outside string) {
	t.Helper()
	proj, outside = t.TempDir(), t.TempDir()
	for path, body := range map[string]string{
		filepath.Join(proj, "in.txt"):          "inside",
		filepath.Join(proj, "sub", "deep.txt"): "deep",
		filepath.Join(outside, "secret.txt"):   "SECRET",
		filepath.Join(proj, ".git", "HEAD"):    "ref: refs/heads/main\n", // a work tree of its own
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(proj, "abs-out"):        filepath.Join(outside, "secret.txt"),
		filepath.Join(proj, "rel-out"):        filepath.Join("..", filepath.Base(outside), "secret.txt"),
		filepath.Join(proj, "dir-out"):        outside,
		filepath.Join(proj, "abs-in"):         filepath.Join(proj, "in.txt"),
		filepath.Join(proj, "sub", "rel-in"):  "../in.txt",
		filepath.Join(proj, "sub", "up-out"):  "../../" + filepath.Base(outside) + "/secret.txt",
		filepath.Join(proj, "loop"):           filepath.Join(proj, "loop"),
		filepath.Join(proj, "sub", "dir-out"): "../dir-out",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return proj, outside
}

func TestReadAttachments(t *testing.T) {
	t.Parallel()
	proj, outside := attachmentWorld(t)
	for _, p := range []string{"in.txt", "sub/deep.txt", "abs-in", "sub/rel-in", filepath.Join(proj, "in.txt"), "./sub/../in.txt"} {
		if as, err := readAttachments(proj, []string{p}, nil); err != nil || len(as) != 1 || len(as[0].Data) == 0 {
			t.Errorf("%s refused: %v", p, err)
		}
	}
	for _, p := range []string{"abs-out", "rel-out", "dir-out/secret.txt", "sub/up-out", "sub/dir-out/secret.txt", "../" + filepath.Base(outside) + "/secret.txt",
		filepath.Join(outside, "secret.txt"), "/etc/passwd", "loop", "sub", "", "nope.txt"} {
		if _, err := readAttachments(proj, []string{p}, nil); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
}

// FuzzAttachmentPath: whatever path an agent names, nothing outside the
// project is ever read.
func FuzzAttachmentPath(f *testing.F) {
	for _, s := range []string{"in.txt", "abs-out", "rel-out", "dir-out/secret.txt", "sub/up-out", "../x", "/etc/passwd", "sub/../../x",
		"sub/dir-out/secret.txt", "./in.txt", "in.txt/", "//in.txt", "sub/rel-in", "\x00", "loop"} {
		f.Add(s)
	}
	proj, _ := attachmentWorld(f)
	f.Fuzz(func(t *testing.T, p string) {
		as, err := readAttachments(proj, []string{p}, nil)
		if err != nil {
			return
		}
		if bytes.Contains(as[0].Data, []byte("SECRET")) || !filepath.IsLocal(filepath.FromSlash(as[0].Path)) {
			t.Fatalf("%q read %q as %q", p, as[0].Data, as[0].Path)
		}
	})
}
