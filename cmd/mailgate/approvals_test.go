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
	parallel(t)
	home, names := approvalsHome(t)
	r := newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals")
	if code := r.run(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	out := r.stdout.String()
	for _, want := range []string{
		"Pending_Approval/ (2)", "Approved/ (1)", "Rejected/ (1)", "Done/ (1)",
		// Full recipients and subjects: masking is for the audit log, not the owner.
		strings.TrimSuffix(names["pending"], ".md") + "  send to alice@example.com  \"Invoice paid\"  created ",
		"expires ",
		strings.TrimSuffix(names["approved"], ".md") + "  reply in thread 18d5a3b2c1d0e0f1 to carol@example.org  \"Re: Budget\"",
		strings.TrimSuffix(names["rejected"], ".md") + "  send to eve@example.net  \"Wire transfer\"",
		strings.TrimSuffix(names["done"], ".md") + "  send to dave@example.com  \"Sent already\"  FAILED: Gmail said no",
		"mailgate approvals show ID", "mailgate approvals approve ID",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
}

func TestApprovalsDecide(t *testing.T) {
	parallel(t)
	tests := []struct {
		name    string
		args    func(names map[string]string) []string
		moved   string // key in names
		to      string
		errText string
	}{
		{"approve by name", func(n map[string]string) []string {
			return []string{"approve", "--yes", strings.TrimSuffix(n["pending"], ".md")}
		},
			"pending", approval.DirApproved, ""},
		{"reject by id prefix", func(n map[string]string) []string {
			id := strings.TrimSuffix(n["pending2"], ".md")
			return []string{"reject", id[strings.LastIndexByte(id, '_')+1:][:6]}
		}, "pending2", approval.DirRejected, ""},
		{"approve without a terminal and without --yes", func(n map[string]string) []string {
			return []string{"approve", n["pending"]}
		}, "", "", "refusing to approve "},
		{"withdraw an approval", func(n map[string]string) []string { return []string{"reject", n["approved"]} },
			"approved", approval.DirRejected, ""},
		{"unknown id", func(map[string]string) []string { return []string{"approve", "zzz"} }, "", "", `"zzz": no request file matches`},
		{"ambiguous id", func(map[string]string) []string { return []string{"approve", "--yes", "20"} }, "", "", "more than one request file matches"},
		{"already used", func(n map[string]string) []string { return []string{"approve", "--yes", n["done"]} }, "", "", "it was already used"},
		{"missing id", func(map[string]string) []string { return []string{"approve"} }, "", "", "approve needs an ID: a name as \"mailgate approvals\" lists it"},
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
	parallel(t)
	home, names := approvalsHome(t)
	cmd := exec.Command(builtBinary(t), "approvals", "approve", "--yes", names["pending"])
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

// showHome is a home with one pending request whose recipient is a
// look-alike and whose body hides text from a Markdown viewer.
func showHome(t *testing.T) (home, name string) {
	t.Helper()
	home = t.TempDir()
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name, err = v.EnsurePending(context.Background(), approval.Request{Kind: approval.KindSend, To: "Bob <bob@exаmple.com>",
		Subject: "Quarterly report", Body: "Hi Bob,\n%%wire 10k%%\nPay 10 EUR\rPay 10000 EUR\n"})
	if err != nil {
		t.Fatal(err)
	}
	return home, name
}

// TestApprovalsShowBinary: `approvals show` prints the exact recipient, the
// subject, every warning and the body with hidden characters escaped.
func TestApprovalsShowBinary(t *testing.T) {
	parallel(t)
	home, name := showHome(t)
	id := strings.TrimSuffix(name, ".md")
	cmd := exec.Command(builtBinary(t), "approvals", "show", id[strings.LastIndexByte(id, '_')+1:][:8])
	cmd.Env = []string{"MAILGATE_HOME=" + home}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{
		"Request  " + name + "\n", "Folder   Pending_Approval/ (status pending)\n",
		"File     " + filepath.Join(home, "vault", "Pending_Approval", name) + "\n",
		"To       bob@exаmple.com\n", "Subject  Quarterly report\n",
		`! To address "bob@exаmple.com" looks like "bob@example.com" but is not`,
		"! The body contains an Obsidian comment (%%…%%)", "! The body contains a carriage return without a line feed on line 3",
		"  │ Hi Bob,\n  │ %%wire 10k%%\n  │ Pay 10 EUR⟨CR⟩Pay 10000 EUR\n  └ end of body",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

// TestApprovalsApproveAsksBinary: approve shows the email and asks on the
// terminal; "no" moves nothing, "yes" approves; without a terminal it
// refuses unless --yes is given.
func TestApprovalsApproveAsksBinary(t *testing.T) {
	parallel(t)
	home, name := showHome(t)
	pending := filepath.Join(home, "vault", "Pending_Approval", name)
	env := []string{"MAILGATE_HOME=" + home, "PATH=" + os.Getenv("PATH")}

	// A pipe is not a terminal: refused, clearly, and nothing moves.
	cmd := exec.Command(builtBinary(t), "approvals", "approve", name)
	cmd.Env, cmd.Stdin = env, strings.NewReader("yes\n")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to approve "+name+" without confirmation: standard input is not a terminal") ||
		!strings.Contains(string(out), "To       bob@exаmple.com") {
		t.Fatalf("approve from a pipe: %v\n%s", err, out)
	}
	if _, err := os.Stat(pending); err != nil {
		t.Fatal("moved without confirmation")
	}

	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give the command a terminal")
	}
	onTerminal := func(answer string) string {
		cmd := exec.Command(script, "-qec", builtBinary(t)+" approvals approve "+name, "/dev/null")
		cmd.Env, cmd.Stdin = env, strings.NewReader(answer)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := onTerminal("no\n"); !strings.Contains(out, "Approve sending this email to bob@exаmple.com? Type yes to approve:") || !strings.Contains(out, "not approved: nothing was moved") {
		t.Fatalf("answer no:\n%s", out)
	}
	if _, err := os.Stat(pending); err != nil {
		t.Fatal("moved although the answer was no")
	}
	if out := onTerminal("yes\n"); !strings.Contains(out, "→ Approved/"+name) {
		t.Fatalf("answer yes:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "vault", "Approved", name)); err != nil {
		t.Fatalf("not approved: %v", err)
	}

	// --yes skips the question.
	home2, name2 := showHome(t)
	cmd = exec.Command(builtBinary(t), "approvals", "approve", name2, "--yes")
	cmd.Env = []string{"MAILGATE_HOME=" + home2}
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "Type yes") {
		t.Fatalf("--yes: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home2, "vault", "Approved", name2)); err != nil {
		t.Fatalf("--yes did not approve: %v", err)
	}
}
