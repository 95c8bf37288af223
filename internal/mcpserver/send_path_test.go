package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// These tests pin the one send path (issue 19): one validator and one set of
// limits for draft_email, send_email and reply_email, and an audit line per
// tool call that records the gate's typed outcome.

// TestSameLimitsOnDraftSendReply: a body just over mailmsg.MaxBodyBytes is
// refused by all three tools with the same text, before Gmail, the vault or
// the limiter are touched; a body of exactly the limit is accepted by all
// three. (A 600 KiB body once passed send_email's check, created a draft and
// failed in the gate with another text.)
func TestSameLimitsOnDraftSendReply(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	msgID, threadID := searchIDs(t, e, "subject:Invoice")
	args := func(tool, body string) map[string]any {
		if tool == "reply_email" {
			return map[string]any{"thread_id": threadID, "message_id": msgID, "body": body}
		}
		return map[string]any{"to": "alice@example.com", "subject": "Report", "body": body}
	}
	tools := []string{"draft_email", "send_email", "reply_email"}

	over := strings.Repeat("a", mailmsg.MaxBodyBytes+1)
	before := e.gm.TotalCalls()
	want := fmt.Sprintf("Error: body is larger than %d bytes", mailmsg.MaxBodyBytes)
	for _, tool := range tools {
		if text, isErr := callTool(t, e.cs, tool, args(tool, over)); !isErr || text != want {
			t.Errorf("%s with a body of %d bytes: (isError=%v) %.200q, want %q", tool, len(over), isErr, text, want)
		}
	}
	if n := e.gm.TotalCalls() - before; n != 0 {
		t.Errorf("a body over the limit reached Gmail: %d requests", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.vault, "Pending_Approval")); len(entries) != 0 {
		t.Errorf("a body over the limit wrote %d request files", len(entries))
	}

	under := strings.Repeat("a", mailmsg.MaxBodyBytes)
	accepted := map[string]string{
		"draft_email": "Draft created successfully.",
		"send_email":  "Rejected: No matching approval file found in vault/Approved/ for sending to",
		"reply_email": "Rejected: No matching approval file found in vault/Approved/ for replying to thread " + threadID,
	}
	for _, tool := range tools {
		if text, _ := callTool(t, e.cs, tool, args(tool, under)); !strings.HasPrefix(text, accepted[tool]) {
			t.Errorf("%s with a body of exactly %d bytes: %.200q, want prefix %q", tool, len(under), text, accepted[tool])
		}
	}

	// The subject: one limit for draft and send (reply's is derived).
	long := strings.Repeat("s", mailmsg.MaxSubjectBytes+1)
	want = fmt.Sprintf("Error: subject is longer than %d bytes", mailmsg.MaxSubjectBytes)
	for _, tool := range tools[:2] {
		a := args(tool, "b")
		a["subject"] = long
		if text, isErr := callTool(t, e.cs, tool, a); !isErr || text != want {
			t.Errorf("%s with a subject of %d bytes: %.200q, want %q", tool, len(long), text, want)
		}
	}
	// Control characters the gate refuses are refused by draft_email too.
	for _, tool := range tools {
		text, isErr := callTool(t, e.cs, tool, args(tool, "a\x00b"))
		if want := "Error: Invalid body: control characters other than tab and line breaks"; !isErr || text != want {
			t.Errorf("%s with NUL in the body: %q, want %q", tool, text, want)
		}
	}
}

// auditLines returns the tool-call lines (action_type = the tool) of tool,
// oldest first.
func auditLines(t *testing.T, e *emailEnv, tool string) []audit.Entry {
	t.Helper()
	all, err := audit.ReadDir(filepath.Join(filepath.Dir(e.vault), "audit"))
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, en := range all {
		if en.Tool == tool && en.ActionType == tool {
			out = append(out, en)
		}
	}
	return out
}

// TestAuditRecordsTypedOutcome: each tool call's own audit line records the
// gate's outcome kind, through the real protocol against the local Gmail
// server. An answer whose outcome is unknown (Gmail may have sent it) is
// audited "unknown", not "error" as a reading of its "Error ..." text said.
func TestAuditRecordsTypedOutcome(t *testing.T) {
	t.Parallel()
	base := map[string]any{"to": "alice@example.com", "subject": "Numbers", "body": "Hi Alice.\n"}
	tests := []struct {
		name   string
		dev    bool
		tool   string
		args   map[string]any
		before func(t *testing.T, e *emailEnv) // the first call's request file is in Pending_Approval/
		answer string                          // prefix of the second call's answer
		result string
	}{
		{name: "awaiting approval", tool: "send_email", args: base, answer: "Rejected: No matching approval", result: audit.ResultRejected},
		{name: "sent", tool: "send_email", args: base, before: approveAll, answer: "Email sent successfully.", result: audit.ResultSuccess},
		{name: "rejected by the approver", tool: "send_email", args: base, before: func(t *testing.T, e *emailEnv) { moveAll(t, e, "Rejected") },
			answer: "Rejected: The approver rejected this email", result: audit.ResultRejected},
		{name: "rate limited", tool: "send_email", args: base, before: func(t *testing.T, e *emailEnv) {
			approveAll(t, e)
			lim, err := ratelimit.New(context.Background(), storetest.OpenDSN(t, emailDSN(t)), 1, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lim.Reserve(context.Background(), time.Now(), "earlier"); err != nil {
				t.Fatal(err)
			}
			e.deps.Gate.Limiter = lim
		}, answer: "Rejected: Rate limit", result: audit.ResultRateLimited},
		{name: "unknown: Gmail may have sent it", tool: "send_email", args: base, before: func(t *testing.T, e *emailEnv) {
			approveAll(t, e)
			e.gm.Inject(localgmail.Fault{Op: "messages.send", Drop: true})
		}, answer: "Error sending email: ", result: audit.ResultUnknown},
		{name: "Gmail refused it", tool: "send_email", args: base, before: func(t *testing.T, e *emailEnv) {
			approveAll(t, e)
			e.gm.Inject(localgmail.Fault{Op: "messages.send", Status: 400, Message: "Invalid To header"})
		}, answer: "Error sending email: ", result: audit.ResultError},
		{name: "invalid", tool: "send_email", args: map[string]any{"to": "not-an-email", "subject": "s", "body": "b"},
			answer: "Error: Invalid email address format: not-an-email", result: audit.ResultError},
		{name: "draft", tool: "draft_email", args: base, answer: "Draft created successfully.", result: audit.ResultSuccess},
		{name: "DEV_MODE send", dev: true, tool: "send_email", args: base, answer: "[DEV_MODE] Send logged but not executed.", result: audit.ResultDevMode},
		{name: "DEV_MODE draft", dev: true, tool: "draft_email", args: base, answer: "[DEV_MODE] Draft logged but not created.", result: audit.ResultDevMode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEmailEnv(t, tt.dev, nil)
			if tt.before != nil {
				request(t, e, tt.tool, tt.args)
				tt.before(t, e)
			}
			text, _ := callTool(t, e.cs, tt.tool, tt.args)
			if !strings.HasPrefix(text, tt.answer) {
				t.Fatalf("answer %.300q, want prefix %q", text, tt.answer)
			}
			lines := auditLines(t, e, tt.tool)
			if len(lines) == 0 {
				t.Fatal("no audit line for the call")
			}
			last := lines[len(lines)-1]
			if last.Result != tt.result {
				t.Fatalf("audit result %q, want %q (answer %.200q)", last.Result, tt.result, text)
			}
			if tt.result == audit.ResultSuccess && last.GmailMessageID == "" {
				t.Fatalf("success audited without the Gmail id: %+v", last)
			}
		})
	}

	t.Run("DEV_MODE reply", func(t *testing.T) {
		e := newEmailEnv(t, true, nil)
		msgID, threadID := searchIDs(t, e, "subject:Invoice")
		text, isErr := callTool(t, e.cs, "reply_email", map[string]any{"thread_id": threadID, "message_id": msgID, "body": "Thanks."})
		if isErr || !strings.HasPrefix(text, "[DEV_MODE] Reply logged but not executed.") {
			t.Fatalf("answer %q", text)
		}
		if lines := auditLines(t, e, "reply_email"); len(lines) != 1 || lines[0].Result != audit.ResultDevMode {
			t.Fatalf("audit lines %+v", lines)
		}
	})
}

func approveAll(t *testing.T, e *emailEnv) { moveAll(t, e, "Approved") }

func moveAll(t *testing.T, e *emailEnv, folder string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(e.vault, "Pending_Approval"))
	for _, en := range entries {
		moveTo(folder)(t, e.vault, en.Name())
	}
}
