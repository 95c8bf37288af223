package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
)

// TestApprovalsActionKindsBinary: `approvals`, `show` and `approve` handle
// send_draft and trash requests: named by their ids, with the draft's
// recipients shown where an email's would be, and an approval from the
// terminal is one the gate honours.
func TestApprovalsActionKindsBinary(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	draft := approval.Request{Kind: approval.KindSendDraft, DraftID: "r-42", MessageID: "18f0a1", Subject: "Plan for Q3",
		Body: "Draft: r-42 (content version 18f0a1)\nTo: alice@example.com\nCc: carol@example.net\nBcc: dave@example.com\nSubject: Plan for Q3\n\n--- text ---\nHello all.\n"}
	trash := approval.Request{Kind: approval.KindTrash, ThreadID: "18d5a3", Subject: "Trip",
		Body: "Move to Trash: the whole thread 18d5a3, 2 messages\n"}
	names := map[string]string{}
	for key, r := range map[string]approval.Request{"draft": draft, "trash": trash} {
		if names[key], err = v.EnsurePending(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(builtBinary(t), append([]string{"approvals"}, args...)...)
		cmd.Env = []string{"MAILGATE_HOME=" + home}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("approvals %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	out := run()
	for _, want := range []string{"send draft r-42 (content version 18f0a1)  \"Plan for Q3\"", "move to Trash: the whole thread 18d5a3  \"Trip\""} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	out = run("show", names["draft"])
	for _, want := range []string{"Type     send draft r-42 (content version 18f0a1)\n", "To       every To, Cc and Bcc of the draft, listed below\n",
		"The draft as Gmail holds it (what is sent;", "  │ Bcc: dave@example.com\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out = run("approve", "--yes", names["trash"])
	for _, want := range []string{"Type     move to Trash: the whole thread 18d5a3\n", "To       nobody: nothing is sent\n", "What is moved to Trash"} {
		if !strings.Contains(out, want) {
			t.Errorf("approve lacks %q:\n%s", want, out)
		}
	}
	a, err := v.Find(ctx, trash)
	if err != nil {
		t.Fatalf("the gate does not see the approval: %v", err)
	}
	c, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Record(approval.Outcome{Status: approval.StatusSent, SentAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if out := run(); !strings.Contains(out, "move to Trash: the whole thread 18d5a3  \"Trip\"  trashed ") {
		t.Errorf("list of a done trash:\n%s", out)
	}
}
