package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemo runs make run's demo through the built binary: it walks every
// email tool, reply_email through the gate like send_email, says where its
// home is, deletes it unless --keep (and says so), and keeps it with --keep.
func TestDemo(t *testing.T) {
	parallel(t)
	tmp := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp}
	for _, keep := range []bool{false, true} {
		args := []string{"demo"}
		if keep {
			args = append(args, "--keep")
		}
		out, code := runIn(t, tmp, env, args...)
		if code != 0 {
			t.Fatalf("demo exit %d:\n%s", code, out)
		}
		for _, want := range []string{"→ search_email", "→ read_email", "→ draft_email", "→ send_email", "→ reply_email",
			"Reply sent successfully", "Email sent successfully", "mailgate approvals approve --yes", "--keep", "mailgate approvals --web",
			// The send has a cc and an attachment, each shown in the request file and bound.
			`cc=["bob@example.org"]`, "   | cc:\n   |   - \"bob@example.org\"", "   | - Cc: bob@example.org",
			"   | attachments:\n   |   - \"receipt-1234.txt (", "Cc       bob@example.org", "Attached receipt-1234.txt ("} {
			if !strings.Contains(out, want) {
				t.Errorf("keep=%t: the demo does not show %q:\n%s", keep, want, out)
			}
		}
		m := regexp.MustCompile(`home \(vault, audit log, store, the sandbox mailbox\): (\S+),`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the demo does not say where its home is:\n%s", out)
		}
		home := m[1]
		done, _ := filepath.Glob(filepath.Join(home, "vault", "Done", "*.md"))
		_, err := os.Stat(home)
		switch {
		case keep && len(done) != 2:
			t.Errorf("--keep: Done/ holds %v, want the send and the reply", done)
		case !keep && err == nil:
			t.Errorf("the demo home %s was not deleted", home)
		case !keep && !strings.Contains(out, "is deleted now; run mailgate demo --keep"):
			t.Errorf("the demo does not say its home is deleted and how to keep it:\n%s", out)
		}
	}
}
