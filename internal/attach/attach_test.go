package attach

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// setup makes an allowed folder (reached through a symlink, as a user's
// ~/Outbox might be) beside a folder of secrets.
func setup(t *testing.T) (Folder, string, string) {
	t.Helper()
	root := t.TempDir()
	real := filepath.Join(root, "real-outbox")
	secret := filepath.Join(root, "secret")
	for _, d := range []string{real, secret, filepath.Join(real, "sub")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "outbox")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	write(t, filepath.Join(real, "report.pdf"), "%PDF-1.4 report")
	write(t, filepath.Join(real, "sub", "notes.txt"), "notes")
	write(t, filepath.Join(secret, "id_ed25519"), "PRIVATE KEY")
	return Folder{Dir: link}, real, secret
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOpenAccepts(t *testing.T) {
	t.Parallel()
	f, real, _ := setup(t)
	if err := os.Symlink(filepath.Join(real, "sub", "notes.txt"), filepath.Join(real, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	files, err := f.Open([]string{"report.pdf", filepath.Join(f.Dir, "sub", "notes.txt"), "alias.txt",
		filepath.Join(real, "report.pdf")})
	if err != nil {
		t.Fatal(err)
	}
	want := []File{
		{Name: "report.pdf", Path: filepath.Join(real, "report.pdf"), Size: 15, SHA256: sha("%PDF-1.4 report"), ContentType: "application/pdf"},
		{Name: "notes.txt", Path: filepath.Join(real, "sub", "notes.txt"), Size: 5, SHA256: sha("notes"), ContentType: "text/plain; charset=utf-8"},
		// A symlink inside the folder to a file inside it is fine; the
		// name is the one the agent gave.
		{Name: "alias.txt", Path: filepath.Join(real, "sub", "notes.txt"), Size: 5, SHA256: sha("notes"), ContentType: "text/plain; charset=utf-8"},
		{Name: "report.pdf", Path: filepath.Join(real, "report.pdf"), Size: 15, SHA256: sha("%PDF-1.4 report"), ContentType: "application/pdf"},
	}
	for i := range want {
		if files[i] != want[i] {
			t.Errorf("file %d = %+v\nwant %+v", i, files[i], want[i])
		}
	}
	atts, err := f.Attachments(files[:2])
	if err != nil || len(atts) != 2 || string(atts[1].Data) != "notes" || atts[0].Name != "report.pdf" ||
		atts[0].ContentType != "application/pdf" {
		t.Fatalf("Attachments = %+v, %v", atts, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	f, real, secret := setup(t)
	mustLink := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(real, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(filepath.Join(secret, "id_ed25519"), "innocent.pdf") // file symlink out
	mustLink(secret, "keys")                                      // directory symlink out
	mustLink("/dev/null", "null")                                 // device, outside too
	mustLink(filepath.Join(real, "gone"), "dangling")
	fifo := filepath.Join(real, "pipe")
	fifoErr := mkfifo(fifo)

	cases := []struct {
		path string
		want error
	}{
		{filepath.Join(secret, "id_ed25519"), ErrOutside},
		{"../secret/id_ed25519", ErrOutside},
		{"sub/../../secret/id_ed25519", ErrOutside},
		{"innocent.pdf", ErrOutside},
		{"keys/id_ed25519", ErrOutside},
		{"null", ErrOutside},
		{"/etc/passwd", ErrOutside},
		{"missing.pdf", ErrNotFound},
		{"dangling", ErrNotFound},
		{"", ErrNotFound},
		{"sub", ErrDirectory},
		{".", ErrDirectory},
		{f.Dir, ErrDirectory},
	}
	if fifoErr == nil {
		cases = append(cases, struct {
			path string
			want error
		}{"pipe", ErrNotRegular})
	}
	for _, c := range cases {
		_, err := f.Open([]string{"report.pdf", c.path})
		var pe *PathError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Path != c.path {
			t.Errorf("Open(%q) = %v, want %v", c.path, err, c.want)
			continue
		}
		if c.want == ErrOutside && !strings.Contains(err.Error(), "attachments are sent only from "+f.Dir) {
			t.Errorf("error text %q does not name the folder", err)
		}
	}
	if _, err := (Folder{}).Open([]string{"x"}); !errors.Is(err, ErrDisabled) {
		t.Errorf("no folder: %v", err)
	}
}

func TestOpenCaps(t *testing.T) {
	t.Parallel()
	f, real, _ := setup(t)
	write(t, filepath.Join(real, "big.bin"), strings.Repeat("x", 100))
	f.MaxFileBytes = 99
	var tl *TooLargeError
	if _, err := f.Open([]string{"big.bin"}); !errors.As(err, &tl) || tl.Total || tl.Size != 100 || tl.Limit != 99 ||
		err.Error() != `attachment "big.bin" too large: 100 bytes, over the 99 bytes limit` {
		t.Errorf("per-file cap: %v", err)
	}
	f.MaxFileBytes, f.MaxTotalBytes = 0, 110
	if _, err := f.Open([]string{"big.bin", "report.pdf"}); !errors.As(err, &tl) || !tl.Total || tl.Size != 115 {
		t.Errorf("total cap: %v", err)
	}
	if _, err := f.Open([]string{"big.bin"}); err != nil {
		t.Errorf("within caps: %v", err)
	}
}

func TestLoadRefusesChanged(t *testing.T) {
	t.Parallel()
	f, real, secret := setup(t)
	path := filepath.Join(real, "report.pdf")
	open := func() File {
		write(t, path, "%PDF-1.4 report")
		files, err := f.Open([]string{"report.pdf"})
		if err != nil {
			t.Fatal(err)
		}
		return files[0]
	}
	file := open()
	if data, err := f.Load(file); err != nil || string(data) != "%PDF-1.4 report" {
		t.Fatalf("unchanged: %q, %v", data, err)
	}

	var ce *ChangedError
	write(t, path, "%PDF-1.4 REPORT") // same size, new content
	if err := f.Recheck(file); !errors.As(err, &ce) || ce.GotSHA256 == ce.WantSHA256 ||
		!strings.Contains(err.Error(), "content changed") {
		t.Errorf("same size: %v", err)
	}
	write(t, path, "%PDF-1.4 report, longer")
	if _, err := f.Load(file); !errors.As(err, &ce) || ce.GotSize != 23 ||
		!strings.Contains(err.Error(), "size changed from 15 to 23 bytes") {
		t.Errorf("grown: %v", err)
	}
	if _, err := f.Attachments([]File{file}); !errors.As(err, &ce) {
		t.Errorf("Attachments: %v", err)
	}

	// Swapped for a symlink to a secret after approval.
	file = open()
	os.Remove(path)
	if err := os.Symlink(filepath.Join(secret, "id_ed25519"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Load(file); !errors.Is(err, ErrOutside) {
		t.Errorf("swapped for a symlink: %v", err)
	}
	os.Remove(path)
	if _, err := f.Load(file); !errors.Is(err, ErrNotFound) {
		t.Errorf("removed: %v", err)
	}
}

func TestSave(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := Downloads{Dir: DownloadDir(home)}
	p1, err := d.Save("../../.bashrc", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if p1 != filepath.Join(home, "downloads", "_.._.bashrc") {
		t.Errorf("path %q", p1)
	}
	p2, _ := d.Save("report.pdf", []byte("two"))
	p3, _ := d.Save("report.pdf", []byte("three"))
	p4, _ := d.Save("report.pdf", []byte("four"))
	if filepath.Base(p2) != "report.pdf" || filepath.Base(p3) != "report-2.pdf" || filepath.Base(p4) != "report-3.pdf" {
		t.Errorf("names %q %q %q", p2, p3, p4)
	}
	if b, _ := os.ReadFile(p2); string(b) != "two" {
		t.Errorf("first file overwritten: %q", b)
	}
	// A symlink planted at the name is not written through.
	target := filepath.Join(home, "target")
	write(t, target, "keep")
	if err := os.Symlink(target, filepath.Join(d.Dir, "evil.txt")); err != nil {
		t.Fatal(err)
	}
	p5, err := d.Save("evil.txt", []byte("x"))
	if err != nil || filepath.Base(p5) != "evil-2.txt" {
		t.Errorf("planted symlink: %q, %v", p5, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("wrote through a symlink: %q", b)
	}
	if runtime.GOOS != "windows" {
		for _, p := range []string{p1, p2, p3, p5} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, %v", p, fi.Mode(), err)
			}
		}
		if fi, _ := os.Stat(d.Dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("folder mode %v", fi.Mode())
		}
	}
	// Over the cap: refused, the limit stated, nothing written.
	d.MaxBytes = 10
	_, err = d.Save("big.bin", bytes.Repeat([]byte("x"), 2_500_000))
	var tl *DownloadTooLargeError
	if !errors.As(err, &tl) || err.Error() != `attachment "big.bin" is 2.5 MB, over the 10 bytes download limit; not saved` {
		t.Errorf("cap: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.Dir, "big.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("oversized file written: %v", err)
	}
	if _, err := (Downloads{}).Save("x", nil); err == nil {
		t.Error("saved without a folder")
	}
}

func TestInlineText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, typ, data string
		max             int
		want            string
		ok              bool
	}{
		{"notes.txt", "text/plain; charset=utf-8", "hello\r\nworld", 0, "hello\nworld", true},
		{"data.json", "application/json", `{"a":1}`, 0, `{"a":1}`, true},
		{"x.csv", "application/octet-stream", "a,b", 0, "a,b", true},
		{"feed", "application/atom+xml", "<feed/>", 0, "<feed/>", true},
		{"hidden.txt", "text/plain", "pay\u202enow\u200b", 0, "paynow", true},
		{"x.bin", "application/octet-stream", "abc", 0, "", false},
		{"x.pdf", "application/pdf", "%PDF", 0, "", false},
		{"x.txt", "text/plain", "bad \xff utf8", 0, "", false},
		{"x.txt", "text/plain", "nul\x00", 0, "", false},
		{"x.txt", "text/plain", "12345", 4, "", false},
		{"x.txt", "text/plain", "1234", 4, "1234", true},
		{"x.png", "image/png", "abc", 0, "", false},
	} {
		got, ok := InlineText(c.name, c.typ, []byte(c.data), c.max)
		if got != c.want || ok != c.ok {
			t.Errorf("InlineText(%q, %q, %q) = %q, %v; want %q, %v", c.name, c.typ, c.data, got, ok, c.want, c.ok)
		}
	}
}

// The approval may bind either side: what Open reports of a file and what
// mailmsg.Digest reports of the attachment built from it agree.
func TestFileMatchesDigest(t *testing.T) {
	t.Parallel()
	f, _, _ := setup(t)
	files, err := f.Open([]string{"report.pdf", "sub/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	atts, err := f.Attachments(files)
	if err != nil {
		t.Fatal(err)
	}
	d, err := mailmsg.Digest(mailmsg.Outgoing{Body: "b", Attachments: atts})
	if err != nil {
		t.Fatal(err)
	}
	for i, file := range files {
		s := d.Attachments[i]
		if s.Name != file.Name || s.Size != file.Size || s.SHA256 != file.SHA256 || s.ContentType != file.ContentType {
			t.Errorf("file %+v, digest %+v", file, s)
		}
	}
}
