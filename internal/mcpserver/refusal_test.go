package mcpserver

import (
	"strings"
	"testing"
)

// TestOneRefusalForEveryGatedTool: the first answer of each of the five
// gated tools starts with the contract's words and then says, in the same
// sentence for all five, what really happens: the request file is what the
// human approves, and a hand-written file is not used in content mode (the
// contract's "Create an approval file" alone sent people writing files the
// gate ignores).
func TestOneRefusalForEveryGatedTool(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	msgID, threadID := searchIDs(t, e, "subject:Invoice")
	truth := " The request file below is what the human approves; a hand-written file is not used (APPROVAL_MODE=content).\n"
	for _, tt := range []struct {
		tool     string
		args     map[string]any
		contract string
	}{
		{"send_email", map[string]any{"to": "alice@example.com", "subject": "Report", "body": "Hi"},
			"Rejected: No matching approval file found in vault/Approved/ for sending to a***@example.com. Create an approval file with type: email_send and move it to vault/Approved/."},
		{"reply_email", map[string]any{"thread_id": threadID, "message_id": msgID, "body": "Thanks"},
			"Rejected: No matching approval file found in vault/Approved/ for replying to thread " + threadID + ". Create an approval file with type: email_reply and move it to vault/Approved/."},
		{"forward_email", map[string]any{"message_id": msgID, "to": "accounts@example.com"},
			"Rejected: No matching approval file found in vault/Approved/ for forwarding message " + msgID + " to a***@example.com."},
		{"send_draft", map[string]any{"draft_id": actDraft(t, e)},
			"Rejected: No matching approval file found in vault/Approved/ to send draft "},
		{"trash_email", map[string]any{"message_id": msgID},
			"Rejected: No matching approval file found in vault/Approved/ to move to Trash message " + msgID + " as it is now."},
	} {
		text, _ := request(t, e, tt.tool, tt.args)
		first, _, _ := strings.Cut(text, "\n")
		if !strings.HasPrefix(first, tt.contract) || !strings.HasSuffix(first+"\n", truth) {
			t.Errorf("%s: first line\n%q\nwant the contract's words %q first, then%q", tt.tool, first, tt.contract, truth)
		}
		if strings.Count(text, "hand-written") != 1 {
			t.Errorf("%s: the refusal says more than once what a hand-written file does:\n%s", tt.tool, text)
		}
	}
}

// TestReplyWithoutThreadIDInProjectWords: a missing required argument of an
// email tool is refused in the project's words, naming what the tool needs,
// not with the schema validator's "missing properties".
func TestReplyWithoutThreadIDInProjectWords(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	for tool, args := range map[string]map[string]any{
		"reply_email": {"body": "Thanks"},
		"send_email":  {"to": "alice@example.com", "body": "Hi"},
	} {
		text, isErr := callTool(t, e.cs, tool, args)
		want := map[string]string{
			"reply_email": "Error: thread_id is required: reply_email needs thread_id, message_id and body",
			"send_email":  "Error: subject is required: send_email needs to, subject and body",
		}[tool]
		if !isErr || text != want {
			t.Errorf("%s without an argument: (isError=%v) %q, want %q", tool, isErr, text, want)
		}
	}
}
