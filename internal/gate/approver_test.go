package gate

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/warnings"
)

// TestCorrectedEmailIsComposedAndAudited: the approver's correction is what
// Compose receives, the agent is told with the final text, and the audit
// log and Done file carry both hashes. Submit's callers, which can only send
// what was asked, leave a corrected approval alone.
func TestCorrectedEmailIsComposedAndAudited(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	g := e.gate(t, false)
	req := sendReq()
	name := e.approve(t, g, req)
	replaceIn(t, filepath.Join(e.vaultDir(), approval.DirApproved, name), "The notes are attached.", "The notes are attached. Sorry for the delay.")

	f := &fakeSend{}
	if out := g.Submit(context.Background(), "send_email", req, f.send); out.Status != Failed || !errors.Is(out.Err, ErrCannotSendEdited) || f.calls.Load() != 0 {
		t.Fatalf("Submit with a corrected approval: %v %v", out.Status, out.Err)
	}
	var composed approval.Request
	out := g.Run(context.Background(), Call{Tool: "send_email", Request: req, Compose: func(final approval.Request) (Composed, error) {
		composed = final
		return Composed{Send: f.send}, nil
	}})
	if out.Status != Sent || f.calls.Load() != 1 || !strings.HasSuffix(composed.Body, "Sorry for the delay.\n") || composed.To != req.To {
		t.Fatalf("Run: %v %v, composed %+v", out.Status, out.Err, composed)
	}
	msg := out.Message()
	if !strings.HasPrefix(msg, "Email sent successfully. Message ID: ") || !strings.Contains(msg, "The approver corrected the body before approving") ||
		!strings.Contains(msg, "Sorry for the delay.") {
		t.Errorf("message:\n%s", msg)
	}
	var sendLine string
	for _, l := range auditLines(t, e.auditDir()) {
		if l.ActionType == ActionSend {
			sendLine = l.Detail
		}
	}
	if want := "original_sha256=" + req.SHA256() + " final_sha256=" + composed.SHA256() + " edited_by_approver=body"; sendLine != want {
		t.Errorf("audit detail %q, want %q", sendLine, want)
	}
	done := e.file(t, approval.DirDone, out.DoneFile)
	if !strings.Contains(done, "final_sha256: "+composed.SHA256()) || !strings.Contains(done, "original_sha256: "+req.SHA256()) {
		t.Errorf("Done file:\n%s", done)
	}
}

// TestAlreadySentIsSaid: after a send, the identical call is told the
// email already went out, and the new request is a marked repeat.
func TestAlreadySentIsSaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	g := e.gate(t, false)
	req := sendReq()
	e.approve(t, g, req)
	f := &fakeSend{}
	sent := g.Submit(context.Background(), "send_email", req, f.send)
	if sent.Status != Sent {
		t.Fatal(sent.Err)
	}
	out := g.Run(context.Background(), Call{Tool: "send_email", Request: req, Compose: func(approval.Request) (Composed, error) { return Composed{Send: f.send}, nil },
		Warnings: func(context.Context) []warnings.Warning {
			return []warnings.Warning{{Code: warnings.CodeNewRecipient, Text: "never written to"}}
		}})
	msg := out.Message()
	if out.Status != AwaitingApproval || !strings.HasSuffix(out.PendingFile, "_repeat-2.md") ||
		!strings.Contains(msg, "\nThis exact email was already sent at 2026-02-14T10:00:00Z (vault/Done/"+sent.DoneFile+").") ||
		!strings.Contains(msg, "- REPEAT: this exact email was already sent") || !strings.Contains(msg, "- never written to") {
		t.Fatalf("%v:\n%s", out.Status, msg)
	}
	if f.calls.Load() != 1 {
		t.Fatal("sent twice")
	}
}

// TestComposeRefusalKeepsTheApproval: a Compose that refuses the approved
// email (an attached file changed since it was approved) sends nothing,
// consumes nothing and reserves no slot; the agent is told why.
func TestComposeRefusalKeepsTheApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1) // one slot: a reservation would show
	g := e.gate(t, false)
	req := sendReq()
	req.Cc = []string{"carol@example.com"}
	req.Attachments = []approval.Attachment{{Name: "a.txt", Size: 3, SHA256: strings.Repeat("ab", 32)}}
	name := e.approve(t, g, req)
	changed := errors.New(`attachment "a.txt" changed since it was approved (its content changed); ask for a new approval`)
	out := g.Run(context.Background(), Call{Tool: "send_email", Request: req, Compose: func(approval.Request) (Composed, error) { return Composed{}, changed }})
	if out.Status != Failed || out.DoneFile != "" || !strings.Contains(out.Message(), "changed since it was approved") {
		t.Fatalf("%v %q", out.Status, out.Message())
	}
	e.file(t, approval.DirApproved, name) // still there
	if retry, err := g.Limiter.Check(context.Background(), g.now()); err != nil || retry != 0 {
		t.Fatalf("a slot was taken: %v %v", retry, err)
	}
	f := &fakeSend{}
	if out := g.Run(context.Background(), Call{Tool: "send_email", Request: req, Compose: func(approval.Request) (Composed, error) { return Composed{Send: f.send}, nil }}); out.Status != Sent {
		t.Fatalf("the kept approval: %v %v", out.Status, out.Err)
	}
}
