package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Dead approvals named (issues 31 and 33): an approval the gate can never
// use is named as such in the agent's answer, mailgate approvals,
// approvals show and doctor, with why and what to do; none of them
// calls it approved.

func runCmd(t *testing.T, w *world, args ...string) string {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	cmd.Env = w.env
	out, _ := cmd.CombinedOutput() // doctor exits non-zero on warnings with --strict only
	return string(out)
}

// requestOne has the agent ask for args and returns the request's name.
func requestOne(t *testing.T, w *world, args map[string]any) string {
	t.Helper()
	cs := w.connectHere()
	if text, _ := call(t, cs, "send_email", args); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("request: %q", text)
	}
	cs.Close()
	p := w.files("Pending_Approval")
	if len(p) != 1 {
		t.Fatalf("pending: %v", p)
	}
	return p[0]
}

func TestBrokenApprovalNamedToAgentAndHuman(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name, want string
		spoil      func(t *testing.T, approved, pending string)
	}{
		{"broken frontmatter", "frontmatter", func(t *testing.T, approved, pending string) {
			data, _ := os.ReadFile(pending)
			os.Remove(pending)
			if err := os.WriteFile(approved, []byte(strings.Replace(string(data), "status: pending", "status: [approved", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink", "symbolic link", func(t *testing.T, approved, pending string) {
			moved := filepath.Join(filepath.Dir(filepath.Dir(pending)), "elsewhere.md")
			if err := os.Rename(pending, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, approved); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, false)
			name := requestOne(t, w, settleArgs)
			vault := filepath.Join(w.home, "vault")
			tc.spoil(t, filepath.Join(vault, "Approved", name), filepath.Join(vault, "Pending_Approval", name))
			cs := w.connectHere()
			text, _ := call(t, cs, "send_email", settleArgs)
			if !strings.Contains(text, "An approval of this email is in vault/Approved/ but cannot be used: Approved/"+name) || !strings.Contains(text, tc.want) {
				t.Errorf("agent's answer does not name the unusable approval:\n%s", text)
			}
			out := runApprovals(t, w)
			if !strings.Contains(out, "CANNOT BE USED") || !strings.Contains(out, tc.want) || !strings.Contains(out, "delete it") {
				t.Errorf("mailgate approvals does not name the unusable approval:\n%s", out)
			}
			if n := len(w.gm.Sent()); n != 0 {
				t.Errorf("%d sent", n)
			}
		})
	}
}

func TestForgedAndAttachmentChangedApprovalsShownDead(t *testing.T) {
	parallel(t)
	attach := t.TempDir()
	w := newWorld(t, false, "ATTACHMENTS_DIR="+attach)
	vault := filepath.Join(w.home, "vault")

	// Forged: a file in Approved/ that looks like this email's request but
	// that mailgate never issued (its request_id is made up).
	name := requestOne(t, w, settleArgs)
	data, _ := os.ReadFile(filepath.Join(vault, "Pending_Approval", name))
	rid := frontField(string(data), "request_id")
	forged := strings.ReplaceAll(string(data), rid, rid[:len(rid)-8]+"00000000")
	if err := os.WriteFile(filepath.Join(vault, "Approved", name), []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(vault, "Pending_Approval", name))

	// Attachment changed: approved, then the file changes.
	if err := os.WriteFile(filepath.Join(attach, "report.txt"), []byte("first version\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withFile := map[string]any{"to": "carol@example.com", "subject": "The report", "body": "Attached.\n", "attachments": []string{"report.txt"}}
	att := requestOne(t, w, withFile)
	w.approveAll()
	if err := os.WriteFile(filepath.Join(attach, "report.txt"), []byte("second version\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct{ id, want string }{
		{name, "no record of issuing this request"},
		{att, "the attached file report.txt changed since the request was written"},
	} {
		out := runApprovals(t, w, "show", strings.TrimSuffix(c.id, ".md"))
		if strings.Contains(out, "the agent's next identical call sends this email once") || !strings.Contains(out, "CANNOT BE USED") || !strings.Contains(out, c.want) {
			t.Errorf("approvals show %s:\n%s", c.id, out)
		}
	}
	doc, _ := runHere(t, "", w.env, "doctor") // doctor exits non-zero on warnings with --strict only
	if !strings.Contains(doc, "0 approved (and 2 in Approved/ that can never be used") || !strings.Contains(doc, "no record of issuing") ||
		!strings.Contains(doc, "report.txt changed") {
		t.Errorf("doctor does not tell the dead approvals from live ones:\n%s", doc)
	}
}
