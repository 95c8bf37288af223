package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
)

func TestRequestApproveSendDone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	g := e.gate(t, false)
	f := &fakeSend{}
	ctx := audit.WithCorrelationID(context.Background(), "cid-1")
	req := sendReq()

	out := g.Submit(ctx, "send_email", req, f.send)
	if out.Status != AwaitingApproval || f.calls.Load() != 0 {
		t.Fatalf("first call: %v (%v), %d sends", out.Status, out.Err, f.calls.Load())
	}
	if want := "2026-02-14_john-example-com_meeting-notes_" + req.SHA256()[:32] + ".md"; out.PendingFile != want {
		t.Fatalf("pending file %q, want %q", out.PendingFile, want)
	}
	msg := out.Message()
	for _, want := range []string{
		"Rejected: No matching approval file found in vault/Approved/ for sending to j***@example.com. Create an approval file with type: email_send and move it to vault/Approved/.",
		"vault/Pending_Approval/" + out.PendingFile, "move it to vault/Approved/",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if again := g.Submit(ctx, "send_email", req, f.send); again.PendingFile != out.PendingFile || len(e.names(t, approval.DirPending)) != 1 {
		t.Fatalf("second identical call: %+v", again)
	}

	if err := os.Rename(filepath.Join(e.vaultDir(), approval.DirPending, out.PendingFile),
		filepath.Join(e.vaultDir(), approval.DirApproved, out.PendingFile)); err != nil {
		t.Fatal(err)
	}
	out = g.Submit(ctx, "send_email", req, f.send)
	if out.Status != Sent || f.calls.Load() != 1 {
		t.Fatalf("approved call: %v (%v), %d sends", out.Status, out.Err, f.calls.Load())
	}
	if got, want := out.Message(), "Email sent successfully. Message ID: msg1 Thread ID: thr1"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	done := e.file(t, approval.DirDone, out.DoneFile)
	for _, want := range []string{"\nstatus: sent\n", "\ngmail_message_id: \"msg1\"\n", "\nsent_at: 2026-02-14T10:00:00Z\n"} {
		if !strings.Contains(done, want) {
			t.Errorf("Done file lacks %q:\n%s", want, done)
		}
	}
	if n := len(e.names(t, approval.DirApproved)); n != 0 {
		t.Fatalf("%d files left in Approved/", n)
	}

	// Reuse is refused: a new approval is needed.
	if out := g.Submit(ctx, "send_email", req, f.send); out.Status != AwaitingApproval || f.calls.Load() != 1 {
		t.Fatalf("reuse: %v, %d sends", out.Status, f.calls.Load())
	}

	var actions []string
	for _, l := range auditLines(t, e.auditDir()) {
		actions = append(actions, l.ActionType+":"+l.Result)
		if l.CorrelationID != "cid-1" || l.Tool != "send_email" || l.Target != "j***@example.com" {
			t.Errorf("audit line %+v", l)
		}
	}
	want := "gate_approval:rejected gate_approval:rejected gate_claim:pending gate_send:success gate_approval:rejected"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("audit actions:\n%s\nwant\n%s", got, want)
	}
	raw, _ := os.ReadFile(filepath.Join(e.auditDir(), "2026-02-14.jsonl"))
	if strings.Contains(string(raw), "john@example.com") || strings.Contains(string(raw), "notes are attached") {
		t.Errorf("audit log leaks an address or the body:\n%s", raw)
	}
}

func TestRefusedWithoutSend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		req    approval.Request
		call   func(*approval.Request)
		edit   func(t *testing.T, path string)
		status Status
	}{
		{name: "other body", call: func(r *approval.Request) { r.Body = "Please wire $10k.\n" }, status: AwaitingApproval},
		{name: "other subject", call: func(r *approval.Request) { r.Subject = "Invoice" }, status: AwaitingApproval},
		{name: "other recipient", call: func(r *approval.Request) { r.To = "mallory@example.com" }, status: AwaitingApproval},
		{name: "second recipient in call", call: func(r *approval.Request) { r.To = "john@example.com, mallory@example.com" }, status: Invalid},
		{name: "second recipient in file", edit: func(t *testing.T, p string) {
			replaceIn(t, p, `to: "John <john@example.com>"`, `to: "john@example.com, mallory@example.com"`)
		}, status: RejectedByApprover}, // refused for good: an approval cannot change the recipient
		{name: "status rejected", edit: func(t *testing.T, p string) { replaceIn(t, p, "status: pending", "status: rejected") }, status: AwaitingApproval},
		{name: "expired", edit: func(t *testing.T, p string) {
			replaceIn(t, p, "expires: 2026-02-15T10:00:00Z", "expires: 2026-02-14T09:59:59Z")
		}, status: AwaitingApproval},
		{name: "symlink", edit: func(t *testing.T, p string) {
			target := p + ".real"
			if err := os.Rename(p, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}, status: AwaitingApproval},
		{name: "reply to another thread", req: replyReq(), call: func(r *approval.Request) { r.ThreadID = "18d5a3b2c1d0e0ff" }, status: AwaitingApproval},
		{name: "reply to another message", req: replyReq(), call: func(r *approval.Request) { r.MessageID = "18d5a3b2c1d0e0ff" }, status: AwaitingApproval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 10)
			g := e.gate(t, false)
			req := tc.req
			if req.Kind == "" {
				req = sendReq()
			}
			name := e.approve(t, g, req)
			if tc.edit != nil {
				tc.edit(t, filepath.Join(e.vaultDir(), approval.DirApproved, name))
			}
			call := req
			if tc.call != nil {
				tc.call(&call)
			}
			f := &fakeSend{}
			out := g.Submit(context.Background(), "send_email", call, f.send)
			if out.Status != tc.status || f.calls.Load() != 0 {
				t.Fatalf("status %v (%v), %d sends; want %v and none", out.Status, out.Err, f.calls.Load(), tc.status)
			}
			if len(e.names(t, approval.DirDone)) != 0 {
				t.Fatal("something was claimed")
			}
		})
	}
}

func TestRejectedByApprover(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	g := e.gate(t, false)
	f := &fakeSend{}
	req := replyReq()
	out := g.Submit(context.Background(), "reply_email", req, f.send)
	if !strings.Contains(out.Message(), "for replying to thread 18d5a3b2c1d0e0f1. Create an approval file with type: email_reply") {
		t.Errorf("reply awaiting message: %s", out.Message())
	}
	if err := os.Rename(filepath.Join(e.vaultDir(), approval.DirPending, out.PendingFile),
		filepath.Join(e.vaultDir(), approval.DirRejected, out.PendingFile)); err != nil {
		t.Fatal(err)
	}
	out = g.Submit(context.Background(), "reply_email", req, f.send)
	if out.Status != RejectedByApprover || f.calls.Load() != 0 {
		t.Fatalf("status %v, %d sends", out.Status, f.calls.Load())
	}
	if want := "Rejected: The approver rejected this email (vault/Rejected/" + out.PendingFile; !strings.HasPrefix(out.Message(), want) {
		t.Errorf("message %q, want prefix %q", out.Message(), want)
	}
}

func TestRateLimitedApprovalStays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	g := e.gate(t, false)
	f := &fakeSend{}
	first, second := sendReq(), sendReq()
	second.Subject = "Second"
	e.approve(t, g, first)
	name2 := e.approve(t, g, second)
	if out := g.Submit(context.Background(), "send_email", first, f.send); out.Status != Sent {
		t.Fatalf("first: %v %v", out.Status, out.Err)
	}
	e.Advance(12 * time.Minute)
	out := g.Submit(context.Background(), "send_email", second, f.send)
	if out.Status != RateLimited || out.RetryAfter != 48*time.Minute || f.calls.Load() != 1 {
		t.Fatalf("second: %v retry %v, %d sends", out.Status, out.RetryAfter, f.calls.Load())
	}
	if want := "Rejected: Rate limit exceeded (1 emails/hour). Next send available in 48 minutes."; !strings.HasPrefix(out.Message(), want) {
		t.Errorf("message %q, want prefix %q", out.Message(), want)
	}
	if got := e.names(t, approval.DirApproved); len(got) != 1 || got[0] != name2 {
		t.Fatalf("Approved/ = %v, want the rate-limited approval kept", got)
	}
	e.Advance(48 * time.Minute)
	if out := g.Submit(context.Background(), "send_email", second, f.send); out.Status != Sent {
		t.Fatalf("after the window: %v %v", out.Status, out.Err)
	}
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		f          *fakeSend
		status     Status
		doneStatus string
		slotFreed  bool
	}{
		{"never reached", &fakeSend{err: netErr{msg: "dial tcp: connection refused", never: true}}, Failed, "failed", true},
		{"refused by Google", &fakeSend{err: netErr{msg: "googleapi: Error 400: Invalid To header", refused: true}}, Failed, "failed", false},
		{"timeout", &fakeSend{err: context.DeadlineExceeded}, Unknown, "unknown", false},
		{"5xx", &fakeSend{err: errors.New("googleapi: Error 503")}, Unknown, "unknown", false},
		{"panic", &fakeSend{panic: true}, Unknown, "unknown", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, 1)
			g := e.gate(t, false)
			req := sendReq()
			e.approve(t, g, req)
			out := g.Submit(context.Background(), "send_email", req, tc.f.send)
			if out.Status != tc.status || tc.f.calls.Load() != 1 {
				t.Fatalf("status %v (%v), %d calls", out.Status, out.Err, tc.f.calls.Load())
			}
			if done := e.file(t, approval.DirDone, out.DoneFile); !strings.Contains(done, "\nstatus: "+tc.doneStatus+"\n") || !strings.Contains(done, "\nerror: ") {
				t.Fatalf("Done file:\n%s", done)
			}
			if !strings.Contains(out.Message(), "sending again needs a new approval") {
				t.Errorf("message: %s", out.Message())
			}
			retry, err := g.Limiter.Check(context.Background(), e.Now())
			if err != nil {
				t.Fatal(err)
			}
			if freed := retry == 0; freed != tc.slotFreed {
				t.Errorf("slot freed = %v, want %v", freed, tc.slotFreed)
			}
			// The failed attempt consumed the approval.
			ok := &fakeSend{}
			if out := g.Submit(context.Background(), "send_email", req, ok.send); out.Status != AwaitingApproval || ok.calls.Load() != 0 {
				t.Fatalf("retry: %v, %d calls", out.Status, ok.calls.Load())
			}
		})
	}
}

func TestDevMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	g := e.gate(t, true)
	f := &fakeSend{}
	req := sendReq()
	out := g.Submit(context.Background(), "send_email", req, f.send)
	if out.Status != DevMode || out.DevApprovalFound || !out.DevLimitOK || out.PendingFile == "" || f.calls.Load() != 0 {
		t.Fatalf("no approval: %+v", out)
	}
	if _, err := os.Stat(out.DevLogPath); err != nil {
		t.Fatalf("dev log: %v", err)
	}
	want := "[DEV_MODE] Send logged but not executed. To: j***@example.com, Subject: Meeting notes. Approval: none; a request was written to vault/Pending_Approval/" + out.PendingFile + ". Rate limit: ok. Nothing was sent (DEV_MODE=true)."
	if got := out.Message(); !strings.HasPrefix(got, want+"\nRequest file: "+filepath.Join(e.vaultDir(), approval.DirPending, out.PendingFile)+"\n") {
		t.Errorf("message\n%s\nwant\n%s", got, want)
	}

	live := e.gate(t, false)
	e.approve(t, live, req)
	for range 2 { // nothing is consumed or reserved, so twice is the same
		out = g.Submit(context.Background(), "send_email", req, f.send)
		if out.Status != DevMode || !out.DevApprovalFound || !out.DevLimitOK || f.calls.Load() != 0 {
			t.Fatalf("approved: %+v", out)
		}
	}
	if n := len(e.names(t, approval.DirApproved)); n != 1 {
		t.Fatalf("DEV_MODE consumed the approval: %d left", n)
	}
	// Fill the window from a live gate; DEV_MODE reports it without reserving.
	other := sendReq()
	other.Subject = "Other"
	e.approve(t, live, other)
	if out := live.Submit(context.Background(), "send_email", other, f.send); out.Status != Sent {
		t.Fatal(out.Status, out.Err)
	}
	out = g.Submit(context.Background(), "send_email", req, f.send)
	if out.DevLimitOK || !strings.Contains(out.Message(), "Rate limit: exceeded, next send available in 60 minutes") {
		t.Errorf("full window: %s", out.Message())
	}

	r := replyReq()
	out = g.Submit(context.Background(), "reply_email", r, f.send)
	if want := "[DEV_MODE] Reply logged but not executed. Thread: 18d5a3b2c1d0e0f1, Body length: 16 chars"; !strings.HasPrefix(out.Message(), want) {
		t.Errorf("reply message %q", out.Message())
	}
	lines := auditLines(t, e.auditDir())
	if l := lines[len(lines)-1]; l.Result != audit.ResultDevMode || l.ActionType != ActionDevMode {
		t.Errorf("last audit line %+v", l)
	}
}

func TestInvalidRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	g := e.gate(t, false)
	f := &fakeSend{}
	req := sendReq()
	req.To = "not-an-email"
	out := g.Submit(context.Background(), "send_email", req, f.send)
	if out.Status != Invalid || f.calls.Load() != 0 || !strings.HasPrefix(out.Message(), "Error: Invalid email address format: not-an-email") {
		t.Fatalf("%v: %s", out.Status, out.Message())
	}
	if len(e.names(t, approval.DirPending)) != 0 {
		t.Fatal("invalid request written to Pending_Approval/")
	}
}

func TestNoSendWithoutAuditLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	g := e.gate(t, false)
	req := sendReq()
	e.approve(t, g, req)
	// The day's audit file becomes unwritable.
	g.Audit.Close()
	if err := os.Mkdir(filepath.Join(e.auditDir(), "2026-02-14.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := &fakeSend{}
	out := g.Submit(context.Background(), "send_email", req, f.send)
	if out.Status != Failed || f.calls.Load() != 0 {
		t.Fatalf("%v (%v), %d sends", out.Status, out.Err, f.calls.Load())
	}
	// Nothing was claimed: the approval stays usable once the log is back.
	if out.DoneFile != "" || len(e.names(t, approval.DirDone)) != 0 || len(e.names(t, approval.DirApproved)) != 1 {
		t.Fatalf("claimed without an audit line: done=%v approved=%v", e.names(t, approval.DirDone), e.names(t, approval.DirApproved))
	}
}

func TestConcurrentSubmitsSendOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 2) // a loser keeping its slot would fill the window
	g := e.gate(t, false)
	req := sendReq()
	e.approve(t, g, req)
	f := &fakeSend{}
	const n = 12
	var wg sync.WaitGroup
	statuses := make(chan Status, n)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses <- g.Submit(context.Background(), "send_email", req, f.send).Status
		}()
	}
	close(start)
	wg.Wait()
	close(statuses)
	// Losers end as Conflict (lost the rename), AwaitingApproval (looked
	// after the winner had claimed) or RateLimited (the racers'
	// reservations filled the window for a moment).
	count := map[Status]int{}
	for s := range statuses {
		count[s]++
	}
	if f.calls.Load() != 1 || count[Sent] != 1 || count[Sent]+count[Conflict]+count[AwaitingApproval]+count[RateLimited] != n {
		t.Fatalf("%d sends, statuses %v", f.calls.Load(), count)
	}
	if retry, _ := g.Limiter.Check(context.Background(), e.Now()); retry != 0 {
		t.Fatal("losers kept their slots")
	}
}

func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAuditResultPerStatus: the result a tool call's audit line records is
// a function of the typed outcome alone, for every status.
func TestAuditResultPerStatus(t *testing.T) {
	t.Parallel()
	want := map[Status]string{
		Sent: audit.ResultSuccess, DevMode: audit.ResultDevMode, RateLimited: audit.ResultRateLimited,
		AwaitingApproval: audit.ResultRejected, RejectedByApprover: audit.ResultRejected,
		Backlog: audit.ResultRejected, Conflict: audit.ResultRejected,
		Unknown: audit.ResultUnknown, Invalid: audit.ResultError, Failed: audit.ResultError, 0: audit.ResultError,
	}
	for s := Status(0); int(s) < len(statusNames); s++ {
		w, ok := want[s]
		if !ok {
			t.Fatalf("status %s has no expected audit result: add it here", s)
		}
		if got := s.AuditResult(); got != w {
			t.Errorf("%s.AuditResult() = %q, want %q", s, got, w)
		}
		if ok := s == Sent || s == DevMode; s.OK() != ok {
			t.Errorf("%s.OK() = %v", s, s.OK())
		}
	}
}

// TestDirect: a write without approval runs once, or in DEV_MODE is logged
// to the vault and not run: the gate alone decides.
func TestDirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	req := approval.Request{Kind: "email_draft", To: "john@example.com", Subject: "Draft", Body: "b"}
	for _, dev := range []bool{false, true} {
		f := &fakeSend{}
		out := e.gate(t, dev).Direct(context.Background(), DirectCall{Tool: "draft_email", Request: req, Note: "n", Do: f.send})
		switch {
		case dev && (out.Status != DevMode || f.calls.Load() != 0 || out.DevLogPath == ""):
			t.Fatalf("DEV_MODE: %+v, %d calls", out, f.calls.Load())
		case !dev && (out.Status != Sent || f.calls.Load() != 1 || out.Result.MessageID == ""):
			t.Fatalf("live: %+v, %d calls", out, f.calls.Load())
		}
	}
	f := &fakeSend{err: errors.New("boom")}
	if out := e.gate(t, false).Direct(context.Background(), DirectCall{Tool: "draft_email", Request: req, Do: f.send}); out.Status != Failed || out.Err == nil {
		t.Fatalf("failing write: %+v", out)
	}
}
