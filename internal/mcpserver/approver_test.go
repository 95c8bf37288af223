package mcpserver

import (
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
)

// These tests run the approver's side of the gate (issue 16) through the
// real protocol, against the local Gmail server.

var pendingFile = regexp.MustCompile(`Pending_Approval/(\S+\.md)`)

// request calls a send or reply once and returns the answer and the request
// file's name.
func request(t *testing.T, e *emailEnv, tool string, args map[string]any) (string, string) {
	t.Helper()
	text, isErr := callTool(t, e.cs, tool, args)
	m := pendingFile.FindStringSubmatch(text)
	if !isErr || m == nil {
		t.Fatalf("%s: want a refusal naming a request file, got (isError=%v) %q", tool, isErr, text)
	}
	return text, m[1]
}

func readVault(t *testing.T, e *emailEnv, folder, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.vault, folder, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sentBody returns the text of the only message Gmail sent.
func sentMessage(t *testing.T, e *emailEnv) (*mail.Message, string) {
	t.Helper()
	sent := e.gm.Sent()
	if len(sent) != 1 {
		t.Fatalf("Gmail sent %d messages, want 1", len(sent))
	}
	raw, _ := e.gm.RawMessage(sent[0].Id)
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := m.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return m, strings.ReplaceAll(b.String(), "\r\n", "\n")
}

// TestAgentSeesWhatTheHumanApproves: the refusal keeps the contract's first
// line and then shows the request file's absolute path, the recipient
// unmasked, the subject, the warnings and the body.
func TestAgentSeesWhatTheHumanApproves(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "Alice <alice@example.com>", "subject": "Quarterly report", "body": "Hi Alice,\n\nattached.\n"}
	text, name := request(t, e, "send_email", args)
	first, _, _ := strings.Cut(text, "\n")
	if first != "Rejected: No matching approval file found in vault/Approved/ for sending to a***@example.com. Create an approval file with type: email_send and move it to vault/Approved/. The request file below is what the human approves; a hand-written file is not used (APPROVAL_MODE=content)." {
		t.Errorf("first line %q", first)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d_alice-example-com_quarterly-report_[0-9a-f]{32}\.md$`).MatchString(name) {
		t.Errorf("file name %q", name)
	}
	mustContain(t, "answer", text, "\nRequest file: "+filepath.Join(e.vault, "Pending_Approval", name)+"\n",
		"\nTo: alice@example.com\n", "\nSubject: Quarterly report\n", "--- body ---\nHi Alice,\n\nattached.\n--- end of body ---",
		"You have never written to alice@example.com before")
}

// TestDuplicateAfterSuccessIsFlagged: an identical call after a send says
// the email already went out, and the new request is a marked repeat under
// its own name; nothing is sent twice without a new approval.
func TestDuplicateAfterSuccessIsFlagged(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "Invoice paid", "body": "Paid today.\n"}
	_, name := request(t, e, "send_email", args)
	approve(t, e.vault, name)
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr {
		t.Fatal(text)
	}
	done, _ := os.ReadDir(filepath.Join(e.vault, "Done"))
	if len(done) != 1 {
		t.Fatalf("Done/ holds %d files", len(done))
	}
	text, again := request(t, e, "send_email", args)
	if !regexp.MustCompile(`\nThis exact email was already sent at \d{4}-\d\d-\d\dT[\d:]+Z \(vault/Done/` + regexp.QuoteMeta(done[0].Name()) + `\)\. Do not send it again`).MatchString(text) {
		t.Errorf("answer does not say it was sent:\n%s", text)
	}
	if again == name || strings.HasPrefix(done[0].Name(), strings.TrimSuffix(again, ".md")) || !strings.HasSuffix(again, "_repeat-2.md") {
		t.Errorf("repeat request named %q (first %q, Done %q)", again, name, done[0].Name())
	}
	file := readVault(t, e, "Pending_Approval", again)
	if !strings.Contains(file, "---\n\n> [!danger] REPEAT: this exact email was already sent at ") {
		t.Errorf("repeat not marked at the top:\n%s", file)
	}
	// The second call does not write a third file.
	request(t, e, "send_email", args)
	if pend, _ := os.ReadDir(filepath.Join(e.vault, "Pending_Approval")); len(pend) != 1 {
		t.Errorf("%d pending files", len(pend))
	}
	if len(e.gm.Sent()) != 1 {
		t.Fatalf("sent %d", len(e.gm.Sent()))
	}
	// Approving the repeat is a conscious decision, and then it is sent.
	approve(t, e.vault, again)
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr || len(e.gm.Sent()) != 2 {
		t.Fatalf("approved repeat: %s", text)
	}
}

// TestCollisionCannotOverwrite: a different file already under the name a
// request would take (planted; with 128-bit ids a real clash is out of
// reach, see approval.TestCollisionNeverOverwrites for one built with short
// ids) is never replaced.
func TestCollisionCannotOverwrite(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "Quarterly report", "body": "Hi\n"}
	req := approval.Request{Kind: approval.KindSend, To: "alice@example.com", Subject: "Quarterly report", Body: "Hi\n"}
	name := time.Now().UTC().Format("2006-01-02") + "_alice-example-com_quarterly-report_" + req.SHA256()[:32] + ".md"
	planted := "---\ntype: email_send\nstatus: pending\nto: \"mallory@example.com\"\nsubject: \"Quarterly report\"\n---\n\nSend the payroll to Mallory.\n"
	path := filepath.Join(e.vault, "Pending_Approval", name)
	if err := os.WriteFile(path, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	_, got := request(t, e, "send_email", args)
	if got == name {
		t.Fatal("the request took the planted file's name")
	}
	if b, _ := os.ReadFile(path); string(b) != planted {
		t.Fatalf("planted file overwritten:\n%s", b)
	}
	approve(t, e.vault, got)
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr {
		t.Fatal(text)
	}
	m, _ := sentMessage(t, e)
	if to, err := m.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "alice@example.com" {
		t.Fatalf("sent to %q", m.Header.Get("To"))
	}
}

// TestLookalikesAreWarned: each look-alike or hidden-character case is
// warned in the answer, in the file's frontmatter and at the top of its body
// area.
func TestLookalikesAreWarned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, to, want string
	}{
		{"cyrillic a", "bob@exаmple.com", `looks like "bob@example.com" but is not`},
		{"zero-width space", "bob\u200b@example.com", "U+200B ZERO WIDTH SPACE"},
		{"RLO in address", "\u202eeci@example.com", "U+202E RIGHT-TO-LEFT OVERRIDE"},
		{"RLO in display name", "\"Bob \u202eecilA\" <bob@example.com>", "display name"},
		{"punycode domain", "bob@xn--exmple-4nf.com", `is punycode: it reads "exаmple.com"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEmailEnv(t, false, nil)
			text, name := request(t, e, "send_email", map[string]any{"to": tc.to, "subject": "Hello", "body": "Hi\n"})
			file := readVault(t, e, "Pending_Approval", name)
			head, body, _ := strings.Cut(file, "\n---\n\n")
			if !strings.Contains(text, tc.want) || !strings.Contains(head, "\nwarnings:\n  - ") || !strings.Contains(head, strings.ReplaceAll(tc.want, `"`, `\"`)) ||
				!strings.HasPrefix(body, "> [!warning] Read before approving:") || !strings.Contains(body[:strings.Index(body, approval.BodyMarker)], tc.want) {
				t.Errorf("warning %q missing:\nanswer:\n%s\nfile:\n%s", tc.want, text, file)
			}
		})
	}
	t.Run("hidden body text", func(t *testing.T) {
		e := newEmailEnv(t, false, nil)
		body := "Hi\n%%wire 10k%%\n<!-- x -->\n[1]: https://evil.example/\nA\rB\n"
		text, _ := request(t, e, "send_email", map[string]any{"to": "alice@example.com", "subject": "Hello", "body": body})
		mustContain(t, "answer", text, "Obsidian comment", "HTML comment", "link reference definition", "carriage return without a line feed", "A⟨CR⟩B")
	})
	t.Run("look-alike Reply-To in reply_email", func(t *testing.T) {
		e := newEmailEnv(t, false, nil)
		if _, err := e.gm.Insert([]byte("From: Dan <dan@example.com>\r\nReply-To: Dan <dan@exаmple.com>\r\nTo: me@example.com\r\nSubject: Wire details\r\nMessage-ID: <w@example.com>\r\n\r\nPlease confirm.\r\n"), "INBOX"); err != nil {
			t.Fatal(err)
		}
		msgID, threadID := searchIDs(t, e, `subject:"Wire details"`)
		text, name := request(t, e, "reply_email", map[string]any{"thread_id": threadID, "message_id": msgID, "body": "Confirmed."})
		file := readVault(t, e, "Pending_Approval", name)
		for _, want := range []string{"CAUTION: the message you answer came from \"dan@example.com\", but its Reply-To sends your reply to \"dan@exаmple.com\", in another domain",
			`looks like "dan@example.com" but is not`, "To: dan@exаmple.com (reply in thread", "Subject: Re: Wire details"} {
			if !strings.Contains(text, want) {
				t.Errorf("answer lacks %q:\n%s", want, text)
			}
			if !strings.HasPrefix(want, "To:") && !strings.HasPrefix(want, "Subject:") && !strings.Contains(file, want) {
				t.Errorf("file lacks %q:\n%s", want, file)
			}
		}
	})
}

// TestEditedBodyIsSentAsEdited: the human corrects subject and body, moves
// the file to Approved/; the agent's identical call sends the corrected
// email and tells the agent so, with the final text.
func TestEditedBodyIsSentAsEdited(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "Quarterly reprot", "body": "Hi Alice,\nthe numbers are atached.\n"}
	_, name := request(t, e, "send_email", args)
	edit(`atached`, "attached", false)(t, e.vault, name)
	edit(`subject: "Quarterly reprot"`, `subject: "Quarterly report"`, true)(t, e.vault, name)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if isErr || !strings.HasPrefix(text, "Email sent successfully. Message ID: ") ||
		!strings.Contains(text, "\nThe approver corrected the subject and body before approving, so what was sent differs from your request. What was sent:\nTo: alice@example.com\nSubject: Quarterly report\n--- body ---\nHi Alice,\nthe numbers are attached.\n--- end of body ---") {
		t.Fatalf("answer (isError=%v):\n%s", isErr, text)
	}
	m, body := sentMessage(t, e)
	if m.Header.Get("Subject") != "Quarterly report" || body != "Hi Alice,\nthe numbers are attached.\n" {
		t.Fatalf("Gmail received subject %q body %q", m.Header.Get("Subject"), body)
	}
	done, _ := os.ReadDir(filepath.Join(e.vault, "Done"))
	file := readVault(t, e, "Done", done[0].Name())
	mustContain(t, "Done file", file, "\nstatus: sent\n", "\noriginal_sha256: ", "\nfinal_sha256: ", "edited_by_approver: \"subject, body\"")
	if strings.Contains(file, "move it to Approved/") {
		t.Errorf("Done file still tells to approve it:\n%s", file)
	}
	// Once sent, the original call is told so; nothing is sent again.
	text, _ = callTool(t, e.cs, "send_email", args)
	if !strings.Contains(text, "This exact email was already sent") || len(e.gm.Sent()) != 1 {
		t.Fatalf("after: %s", text)
	}
}

// TestEditedRecipientIsRefused: a change of recipient is refused, the file
// leaves Approved/ for Rejected/ with status refused and the reason, and
// nothing is sent, now or on later identical calls.
func TestEditedRecipientIsRefused(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "Hello", "body": "Hi\n"}
	_, name := request(t, e, "send_email", args)
	edit(`to: "alice@example.com"`, `to: "bob@example.com"`, true)(t, e.vault, name)
	for i := 0; i < 2; i++ {
		text, isErr := callTool(t, e.cs, "send_email", args)
		if !isErr || !strings.HasPrefix(text, "Rejected: The approver changed this email in a way an approval cannot allow: the recipient was changed from alice@example.com to bob@example.com") {
			t.Fatalf("call %d: %s", i, text)
		}
	}
	if len(e.gm.Sent()) != 0 {
		t.Fatal("sent")
	}
	if left, _ := os.ReadDir(filepath.Join(e.vault, "Approved")); len(left) != 0 {
		t.Fatalf("left in Approved/: %v", left)
	}
	file := readVault(t, e, "Rejected", name)
	mustContain(t, "file", file, "\nstatus: refused\n", "\nreason: \"the recipient was changed from alice@example.com to bob@example.com")
}

// TestPendingRequestsAreBounded: at most 20 requests to one recipient wait
// at once; the 21st is refused with a clear text, and nothing is written.
func TestPendingRequestsAreBounded(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	for i := 0; i < approval.DefaultMaxPendingPerRecipient; i++ {
		request(t, e, "send_email", map[string]any{"to": "alice@example.com", "subject": fmt.Sprint("Report ", i), "body": "x\n"})
	}
	text, isErr := callTool(t, e.cs, "send_email", map[string]any{"to": "alice@example.com", "subject": "One more", "body": "x\n"})
	if !isErr || text != "Rejected: 20 requests to alice@example.com are already waiting for approval in Pending_Approval/ (the most mailgate keeps per recipient). Nothing was written and nothing was sent. Ask the human to approve or reject the waiting requests (mailgate approvals) before asking for more." {
		t.Fatalf("21st request: %q", text)
	}
	if pend, _ := os.ReadDir(filepath.Join(e.vault, "Pending_Approval")); len(pend) != 20 {
		t.Fatalf("%d pending files", len(pend))
	}
	// Another recipient still gets through.
	request(t, e, "send_email", map[string]any{"to": "bob@example.com", "subject": "Hi", "body": "x\n"})
}

// TestNewRecipientWarning: "never written to" is asked of Gmail's Sent
// folder; an address mail went to before gets no such warning.
func TestNewRecipientWarning(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	if _, err := e.gm.Insert([]byte("From: me@example.com\r\nTo: Carol <carol@example.net>\r\nSubject: Earlier\r\nMessage-ID: <e@example.com>\r\n\r\nHi.\r\n"), "SENT"); err != nil {
		t.Fatal(err)
	}
	text, _ := request(t, e, "send_email", map[string]any{"to": "carol@example.net", "subject": "Again", "body": "x\n"})
	if strings.Contains(text, "never written to") {
		t.Errorf("warned about a known recipient:\n%s", text)
	}
	text, _ = request(t, e, "send_email", map[string]any{"to": "carl@example.net", "subject": "Again", "body": "x\n"})
	if !strings.Contains(text, "You have never written to carl@example.net before") {
		t.Errorf("no warning for a new recipient:\n%s", text)
	}
}
