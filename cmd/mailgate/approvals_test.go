package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
)

// approvalsHome is a home whose vault holds a request in each folder and
// two pending ones.
func approvalsHome(t *testing.T) (home string, names map[string]string) {
	t.Helper()
	ctx := context.Background()
	home = t.TempDir()
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names = map[string]string{}
	pend := func(key string, req approval.Request) {
		n, err := v.EnsurePending(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		names[key] = n
	}
	mv := func(key, to string) {
		if err := os.Rename(filepath.Join(home, "vault", approval.DirPending, names[key]), filepath.Join(home, "vault", to, names[key])); err != nil {
			t.Fatal(err)
		}
	}
	send := func(to, subject string) approval.Request {
		return approval.Request{Kind: approval.KindSend, To: to, Subject: subject, Body: "Hello.\n"}
	}
	pend("pending", send("alice@example.com", "Invoice paid"))
	pend("pending2", send("bob@example.com", "Lunch?"))
	pend("approved", approval.Request{Kind: approval.KindReply, ThreadID: "18d5a3b2c1d0e0f1", MessageID: "18d5a3b2c1d0e0f2",
		To: "carol@example.org", Subject: "Re: Budget", Body: "Agreed.\n"})
	mv("approved", approval.DirApproved)
	pend("rejected", send("eve@example.net", "Wire transfer"))
	mv("rejected", approval.DirRejected)
	done := send("dave@example.com", "Sent already")
	pend("done", done)
	mv("done", approval.DirApproved)
	a, err := v.Find(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Record(approval.Outcome{Status: approval.StatusFailed, Error: "Gmail said no"}); err != nil {
		t.Fatal(err)
	}
	names["done"] = c.Name
	return home, names
}

func TestApprovalsList(t *testing.T) {
	home, names := approvalsHome(t)
	r := newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals")
	if code := r.run(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	out := r.stdout.String()
	for _, want := range []string{
		"Pending_Approval/ (2)", "Approved/ (1)", "Rejected/ (1)", "Done/ (1)",
		strings.TrimSuffix(names["pending"], ".md") + "  send to a***@example.com  \"Invoice paid\"  created ",
		"expires ",
		strings.TrimSuffix(names["approved"], ".md") + "  reply in thread 18d5a3b2c1d0e0f1 to c***@example.org  \"Re: Budget\"",
		strings.TrimSuffix(names["rejected"], ".md") + "  send to e***@example.net  \"Wire transfer\"",
		strings.TrimSuffix(names["done"], ".md") + "  send to d***@example.com  \"Sent already\"  FAILED: Gmail said no",
		"mailgate approvals approve ID",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	for _, full := range []string{"alice@", "carol@", "eve@", "dave@"} {
		if strings.Contains(out, full) {
			t.Errorf("list shows an unmasked address %s:\n%s", full, out)
		}
	}
}

func TestApprovalsDecide(t *testing.T) {
	tests := []struct {
		name    string
		args    func(names map[string]string) []string
		moved   string // key in names
		to      string
		errText string
	}{
		{"approve by name", func(n map[string]string) []string {
			return []string{"approve", strings.TrimSuffix(n["pending"], ".md")}
		},
			"pending", approval.DirApproved, ""},
		{"reject by hash prefix", func(n map[string]string) []string {
			return []string{"reject", strings.TrimPrefix(n["pending2"], "EMAIL_SEND_")[:6]}
		}, "pending2", approval.DirRejected, ""},
		{"withdraw an approval", func(n map[string]string) []string { return []string{"reject", n["approved"]} },
			"approved", approval.DirRejected, ""},
		{"unknown id", func(map[string]string) []string { return []string{"approve", "zzz"} }, "", "", `"zzz": no request file matches`},
		{"ambiguous id", func(map[string]string) []string { return []string{"approve", "EMAIL_SEND"} }, "", "", "more than one request file matches"},
		{"already used", func(n map[string]string) []string { return []string{"approve", n["done"]} }, "", "", "it was already used"},
		{"missing id", func(map[string]string) []string { return []string{"approve"} }, "", "", "Usage:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, names := approvalsHome(t)
			r := newSetupRun([]string{"MAILGATE_HOME=" + home, "DEV_MODE=false"}, nil, append([]string{"approvals"}, tt.args(names)...)...)
			code := r.run(t)
			if tt.errText != "" {
				if code == 0 || !strings.Contains(r.stderr.String(), tt.errText) {
					t.Fatalf("exit %d, stderr %q, want %q", code, r.stderr, tt.errText)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, r.stderr)
			}
			name := names[tt.moved]
			if _, err := os.Stat(filepath.Join(home, "vault", tt.to, name)); err != nil {
				t.Fatalf("%s not in %s/: %v\n%s", name, tt.to, err, r.stdout)
			}
			if !strings.Contains(r.stdout.String(), "→ "+tt.to+"/"+name) {
				t.Errorf("stdout = %q", r.stdout)
			}
		})
	}
}

// TestApprovalsBinary approves with the built binary: the move is the
// approval the gate honours (checked by the vault itself).
func TestApprovalsBinary(t *testing.T) {
	home, names := approvalsHome(t)
	cmd := exec.Command(builtBinary(t), "approvals", "approve", names["pending"])
	cmd.Env = []string{"MAILGATE_HOME=" + home}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Find(context.Background(), approval.Request{Kind: approval.KindSend, To: "alice@example.com", Subject: "Invoice paid", Body: "Hello.\n"}); err != nil {
		t.Fatalf("the gate does not see the approval: %v", err)
	}
	cmd = exec.Command(builtBinary(t), "approvals", "reject", "nope")
	cmd.Env = []string{"MAILGATE_HOME=" + home}
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "no request file matches") {
		t.Fatalf("reject nope: %v %s", err, out)
	}
}
