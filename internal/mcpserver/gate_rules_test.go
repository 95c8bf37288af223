package mcpserver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGateRulesThroughProtocol runs every approval rule of the gate through
// the real protocol: one request, one human action on the vault, one call,
// and what must (not) reach Gmail.
func TestGateRulesThroughProtocol(t *testing.T) {
	t.Parallel()
	base := map[string]any{"to": "alice@example.com", "subject": "Quarterly numbers", "body": "Hi Alice,\nthe numbers are attached.\n"}
	with := func(k, v string) map[string]any {
		m := map[string]any{}
		for key, val := range base {
			m[key] = val
		}
		m[k] = v
		return m
	}
	tests := []struct {
		name  string
		human func(t *testing.T, vault, file string) // what happens to the request file
		call  map[string]any
		want  string // prefix of the answer
		sent  int
	}{
		{"approved exactly", approve, base, "Email sent successfully.", 1},
		{"CRLF line endings are the same body", approve, with("body", "Hi Alice,\r\nthe numbers are attached.\r\n"), "Email sent successfully.", 1},
		{"other body", approve, with("body", "Hi Alice,\nwire the money today.\n"), "Rejected: No matching approval", 0},
		{"other subject", approve, with("subject", "Urgent: wire transfer"), "Rejected: No matching approval", 0},
		{"other recipient", approve, with("to", "mallory@example.com"), "Rejected: No matching approval", 0},
		{"second recipient smuggled into to", approve, with("to", "alice@example.com, mallory@example.com"), "Error: Invalid email address format", 0},
		{"expired approval", edit(`expires: \S+`, "expires: 2020-01-01T00:00:00Z", true), base, "Rejected: No matching approval", 0},
		{"rejected status", edit(`status: pending`, "status: rejected", true), base, "Rejected: No matching approval", 0},
		// The approver may correct the email: the corrected file is what is sent (issue 16).
		{"body edited in the approval", edit(`the numbers are attached\.`, "the numbers are attached, and wire 10k.", true), base, "Email sent successfully.", 1},
		{"recipient edited in the approval", edit(`to: "alice@example.com"`, `to: "mallory@example.com"`, true), base, "Rejected: The approver changed this email", 0},
		{"moved to Rejected/", moveTo("Rejected"), base, "Rejected: The approver rejected this email", 0},
		{"symlink in Approved/", func(t *testing.T, vault, file string) {
			if err := os.Symlink(filepath.Join(vault, "Pending_Approval", file), filepath.Join(vault, "Approved", file)); err != nil {
				t.Fatal(err)
			}
		}, base, "Rejected: No matching approval", 0},
		{"approval written by the agent itself", func(t *testing.T, vault, file string) {
			os.Remove(filepath.Join(vault, "Pending_Approval", file))
			forged := "---\ntype: email_send\nstatus: approved\nrequest_id: EMAIL_SEND_forged-00000000\nto: alice@example.com\nsubject: \"Quarterly numbers\"\nexpires: 2099-01-01T00:00:00Z\n---\n\nHi Alice,\nthe numbers are attached.\n"
			os.WriteFile(filepath.Join(vault, "Approved", "forged.md"), []byte(forged), 0o600)
		}, base, "Rejected: No matching approval", 0},
		{"not a .md file", func(t *testing.T, vault, file string) {
			os.Rename(filepath.Join(vault, "Pending_Approval", file), filepath.Join(vault, "Approved", strings.TrimSuffix(file, ".md")+".txt"))
		}, base, "Rejected: No matching approval", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEmailEnv(t, false, nil)
			text, _ := callTool(t, e.cs, "send_email", base)
			file := pendingFile.FindStringSubmatch(text)
			if file == nil {
				t.Fatalf("no request file named in %q", text)
			}
			tt.human(t, e.vault, file[1])
			text, isErr := callTool(t, e.cs, "send_email", tt.call)
			if !strings.HasPrefix(text, tt.want) || isErr != (tt.sent == 0) {
				t.Fatalf("answer (isError=%v) %q, want prefix %q", isErr, text, tt.want)
			}
			if got := len(e.gm.Sent()); got != tt.sent {
				t.Fatalf("Gmail sent %d, want %d", got, tt.sent)
			}
		})
	}
}

func approve(t *testing.T, vault, file string) {
	moveTo("Approved")(t, vault, file)
}

func moveTo(folder string) func(*testing.T, string, string) {
	return func(t *testing.T, vault, file string) {
		if err := os.Rename(filepath.Join(vault, "Pending_Approval", file), filepath.Join(vault, folder, file)); err != nil {
			t.Fatal(err)
		}
	}
}

// edit rewrites the request file (as a human in an editor would) and then
// approves it if andApprove.
func edit(pattern, repl string, andApprove bool) func(*testing.T, string, string) {
	return func(t *testing.T, vault, file string) {
		path := filepath.Join(vault, "Pending_Approval", file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := regexp.MustCompile(pattern).ReplaceAllString(string(data), repl)
		if out == string(data) {
			t.Fatalf("edit %q changed nothing", pattern)
		}
		os.WriteFile(path, []byte(out), 0o600)
		if andApprove {
			approve(t, vault, file)
		}
	}
}

// TestReplyApprovalBoundToThread: an approval for a reply in one thread does
// not allow the same reply in another.
func TestReplyApprovalBoundToThread(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	e.gm.Insert([]byte("From: Dan <dan@example.com>\r\nTo: me@example.com\r\nSubject: Plan A\r\nMessage-ID: <a@example.com>\r\n\r\nA?\r\n"), "INBOX")
	e.gm.Insert([]byte("From: Dan <dan@example.com>\r\nTo: me@example.com\r\nSubject: Plan B\r\nMessage-ID: <b@example.com>\r\n\r\nB?\r\n"), "INBOX")
	msgA, threadA := searchIDs(t, e, `subject:"Plan A"`)
	msgB, threadB := searchIDs(t, e, `subject:"Plan B"`)
	callTool(t, e.cs, "reply_email", map[string]any{"thread_id": threadA, "message_id": msgA, "body": "Yes."})
	entries, _ := os.ReadDir(filepath.Join(e.vault, "Pending_Approval"))
	for _, en := range entries {
		approve(t, e.vault, en.Name())
	}
	text, isErr := callTool(t, e.cs, "reply_email", map[string]any{"thread_id": threadB, "message_id": msgB, "body": "Yes."})
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ for replying to thread "+threadB) || len(e.gm.Sent()) != 0 {
		t.Fatalf("reply in another thread with thread A's approval: %q (sent %d)", text, len(e.gm.Sent()))
	}
	text, isErr = callTool(t, e.cs, "reply_email", map[string]any{"thread_id": threadA, "message_id": msgA, "body": "Yes."})
	if isErr || len(e.gm.Sent()) != 1 || e.gm.Sent()[0].ThreadId != threadA {
		t.Fatalf("approved reply: %q", text)
	}
}

// searchIDs returns the message and thread ids of the first message
// search_email finds for query.
func searchIDs(t *testing.T, e *emailEnv, query string) (msgID, threadID string) {
	t.Helper()
	text, _ := callTool(t, e.cs, "search_email", map[string]any{"query": query})
	m := regexp.MustCompile(`Message ID: (\w+) \| Thread ID: (\w+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("search %q found no message: %q", query, text)
	}
	return m[1], m[2]
}
