package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
)

// TestApprovalsSettingsKindsBinary: `approvals` lists and shows the gated
// settings changes (a forwarding filter here) by what they do, with the
// description where an email's body would be, and an approval from the
// terminal is one the vault honours.
func TestApprovalsSettingsKindsBinary(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	filter := approval.Request{Kind: approval.KindFilterCreate, Target: approval.TargetFilter, Subject: `create filter: if from "a@b.example": FORWARD it to x@evil.example`,
		Body: "WARNING: every matching email will be FORWARDED to x@evil.example.\n\nCreate a Gmail filter.\n- FORWARD it to x@evil.example\n"}
	name, err := v.EnsurePending(ctx, filter)
	if err != nil {
		t.Fatal(err)
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
	if out := run(); !strings.Contains(out, "(gmail_filter_create, target filter)") {
		t.Errorf("list:\n%s", out)
	}
	out := run("approve", "--yes", name)
	for _, want := range []string{"Type     create filter: if from", "To       nobody now; a forwarding filter forwards future mail (shown below)\n",
		"What will be done (mailgate's description;", "FORWARDED to x@evil.example"} {
		if !strings.Contains(out, want) {
			t.Errorf("approve lacks %q:\n%s", want, out)
		}
	}
	if _, err := v.Find(ctx, filter); err != nil {
		t.Fatalf("approved from the terminal, the vault finds no approval: %v", err)
	}
}
