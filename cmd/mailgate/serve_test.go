package main

import (
	"context"
	"io"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeApprovalRoundTrip is the whole protocol as a user lives it, with
// the built binary over stdio against the local Gmail server (real OAuth):
// search, read, draft, a send refused with a request file, the human's move,
// the send, Done/ with the outcome, reuse refused.
func TestServeApprovalRoundTrip(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	cs := w.connect()

	names := toolNames(t, cs)
	if got := strings.Join(names, ","); got != strings.Join(emailTools, ",") { // go-sdk lists by name
		t.Fatalf("tools = %s", got)
	}

	text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"})
	if isErr || !strings.HasPrefix(text, `Found 1 email matching "invoice":`) || !strings.Contains(text, "Subject: Invoice #1234 | Date: 2026-11-10") {
		t.Fatalf("search_email = %q", text)
	}
	msgID := regexp.MustCompile(`Message ID: (\w+)`).FindStringSubmatch(text)[1]

	text, isErr = call(t, cs, "read_email", map[string]any{"message_id": msgID})
	if isErr || !strings.Contains(text, "1,200 EUR") || !strings.Contains(text, "UNTRUSTED EMAIL CONTENT") {
		t.Fatalf("read_email = %q", text)
	}

	text, isErr = call(t, cs, "draft_email", map[string]any{"to": "alice@example.com", "subject": "Re: invoice", "body": "Paying this week."})
	if isErr || !regexp.MustCompile(`^Draft created successfully\. Draft ID: r-?\d+\. Review it in your Gmail drafts folder\.$`).MatchString(text) {
		t.Fatalf("draft_email = %q", text)
	}

	send := map[string]any{"to": "alice@example.com", "subject": "Invoice #1234 paid", "body": "Hi Alice,\nPaid today.\n"}
	text, isErr = call(t, cs, "send_email", send)
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ for sending to a***@example.com. Create an approval file with type: email_send and move it to vault/Approved/.") {
		t.Fatalf("first send_email = %q", text)
	}
	pending := w.files("Pending_Approval")
	if len(pending) != 1 || !strings.Contains(text, pending[0]) {
		t.Fatalf("pending = %v; answer must name the file: %q", pending, text)
	}
	// The same call again gives the same file, not a second one.
	call(t, cs, "send_email", send)
	if again := w.files("Pending_Approval"); len(again) != 1 {
		t.Fatalf("a repeated request wrote another file: %v", again)
	}
	req := w.read("Pending_Approval", pending[0])
	for _, want := range []string{"type: email_send", "status: pending", `to: "alice@example.com"`, "content_sha256:", "expires:", "Hi Alice,\nPaid today.\n"} {
		if !strings.Contains(req, want) {
			t.Errorf("request file lacks %q:\n%s", want, req)
		}
	}
	if len(w.gm.Sent()) != 0 {
		t.Fatal("something was sent before approval")
	}

	w.approveAll()
	text, isErr = call(t, cs, "send_email", send)
	if isErr || !regexp.MustCompile(`^Email sent successfully\. Message ID: \w+ Thread ID: \w+$`).MatchString(text) {
		t.Fatalf("approved send_email = %q", text)
	}
	sent := w.gm.Sent()
	if len(sent) != 1 {
		t.Fatalf("sent %d messages, want 1", len(sent))
	}
	raw, _ := w.gm.RawMessage(sent[0].Id)
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if to, _ := m.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "alice@example.com" || m.Header.Get("Subject") != "Invoice #1234 paid" {
		t.Fatalf("sent message headers: %v %v", m.Header, err)
	}
	if got := w.files("Approved"); len(got) != 0 {
		t.Fatalf("approval left in Approved/: %v", got)
	}
	doneFiles := w.files("Done")
	if len(doneFiles) != 1 || !strings.HasPrefix(doneFiles[0], strings.TrimSuffix(pending[0], ".md")) {
		t.Fatalf("Done/ = %v", doneFiles)
	}
	done := w.read("Done", doneFiles[0])
	for _, want := range []string{"status: sent", "sent_at:", `gmail_message_id: "` + sent[0].Id + `"`} {
		if !strings.Contains(done, want) {
			t.Errorf("Done file lacks %q:\n%s", want, done)
		}
	}

	// The consumed approval is never reused.
	text, isErr = call(t, cs, "send_email", send)
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval") || len(w.gm.Sent()) != 1 {
		t.Fatalf("reuse: %q, sent %d", text, len(w.gm.Sent()))
	}
	auditLines := readAudit(t, w.home)
	if !strings.Contains(auditLines, `"tool":"send_email"`) || strings.Contains(auditLines, "alice@example.com") || strings.Contains(auditLines, "Paid today") {
		t.Fatalf("audit log must record the sends with masked targets and no bodies:\n%s", auditLines)
	}
}

// TestServeReplyThreading: a reply approved for its thread is sent into the
// thread, to the parent's Reply-To, with In-Reply-To/References from the
// parent's real headers.
func TestServeReplyThreading(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	cs := w.connectHere()
	text, _ := call(t, cs, "search_email", map[string]any{"query": "subject:kickoff", "max_results": 5})
	ids := regexp.MustCompile(`Message ID: (\w+) \| Thread ID: (\w+)`).FindAllStringSubmatch(text, -1)
	if len(ids) != 2 || ids[0][2] != ids[1][2] {
		t.Fatalf("want two messages in one thread: %q", text)
	}
	latest, thread := ids[0][1], ids[0][2] // newest first

	args := map[string]any{"thread_id": thread, "message_id": latest, "body": "Thursday works."}
	text, isErr := call(t, cs, "reply_email", args)
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ for replying to thread "+thread+". Create an approval file with type: email_reply") {
		t.Fatalf("first reply = %q", text)
	}
	req := w.read("Pending_Approval", w.files("Pending_Approval")[0])
	if !strings.Contains(req, `thread_id: "`+thread+`"`) || !strings.Contains(req, "type: email_reply") {
		t.Fatalf("reply request file:\n%s", req)
	}
	w.approveAll()

	// The approval is bound to its thread: the same body to another thread is refused.
	other := map[string]any{"thread_id": "ffffffffffffffff", "message_id": latest, "body": "Thursday works."}
	if text, isErr := call(t, cs, "reply_email", other); !isErr || !strings.Contains(text, "not found") {
		t.Fatalf("reply to another thread = %q", text)
	}

	text, isErr = call(t, cs, "reply_email", args)
	if isErr || !strings.HasPrefix(text, "Reply sent successfully. Message ID: ") || !strings.HasSuffix(text, "Thread ID: "+thread) {
		t.Fatalf("approved reply = %q", text)
	}
	sent := w.gm.Sent()
	if len(sent) != 1 || sent[0].ThreadId != thread {
		t.Fatalf("reply not in the thread: %+v", sent)
	}
	raw, _ := w.gm.RawMessage(sent[0].Id)
	m, _ := mail.ReadMessage(strings.NewReader(string(raw)))
	for h, want := range map[string]string{
		"To":          "desk@example.org", // the parent's Reply-To, not its From
		"Subject":     "Re: Project kickoff",
		"In-Reply-To": "<kickoff-2@example.org>",
		"References":  "<kickoff-1@example.org> <kickoff-2@example.org>",
	} {
		if got := m.Header.Get(h); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
}

// TestServeDevModeSendsNothing: DEV_MODE runs the gates and sends nothing,
// not even a draft, and says what would have happened.
func TestServeDevModeSendsNothing(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	cs := w.connectHere()
	text, isErr := call(t, cs, "draft_email", map[string]any{"to": "alice@example.com", "subject": "Meeting notes", "body": "x"})
	if isErr || text != "[DEV_MODE] Draft logged but not created. To: a***@example.com, Subject: Meeting notes" {
		t.Fatalf("draft in DEV_MODE = %q", text)
	}
	send := map[string]any{"to": "alice@example.com", "subject": "Meeting notes", "body": "x"}
	text, _ = call(t, cs, "send_email", send)
	if !strings.HasPrefix(text, "[DEV_MODE] Send logged but not executed. To: a***@example.com, Subject: Meeting notes") || !strings.Contains(text, "Approval: none") {
		t.Fatalf("send in DEV_MODE = %q", text)
	}
	w.approveAll()
	text, _ = call(t, cs, "send_email", send)
	if !strings.Contains(text, "Approval: found") {
		t.Fatalf("DEV_MODE must say the approval matches: %q", text)
	}
	if len(w.files("Approved")) != 1 || len(w.files("Done")) != 0 {
		t.Fatalf("DEV_MODE consumed the approval: approved=%v done=%v", w.files("Approved"), w.files("Done"))
	}
	if n := w.gm.Calls("messages.send") + w.gm.Calls("drafts.create"); n != 0 {
		t.Fatalf("DEV_MODE made %d sending requests to Gmail", n)
	}
	logs, _ := filepath.Glob(filepath.Join(w.home, "vault", "Logs", "*", "*", "*.md"))
	if len(logs) == 0 {
		t.Fatal("DEV_MODE wrote no would-be email under vault/Logs/")
	}
}

// TestServeFailsFast: a bad value or an unusable path stops the server at
// once with one line on stderr naming what to fix.
func TestServeFailsFast(t *testing.T) {
	parallel(t)
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, []byte("x"), 0o600)
	// here: a value refused while the configuration is read, before
	// anything is opened or set process-wide, is refused in-process
	// (runHere: main's dispatch and exit status, no process start); the
	// first such row and the rest run the binary.
	tests := []struct {
		name string
		env  []string
		want string
		here bool
	}{
		{"bad DEV_MODE", []string{"DEV_MODE=maybe"}, "DEV_MODE", false},
		{"bad APPROVAL_MODE", []string{"APPROVAL_MODE=trust"}, "APPROVAL_MODE", true},
		{"bad limit", []string{"SEND_LIMIT_PER_HOUR=ten"}, "SEND_LIMIT_PER_HOUR", true},
		{"unknown tool set", []string{"MAILGATE_TOOLS=email,fax"}, "MAILGATE_TOOLS", true},
		{"vault under a file", []string{"VAULT_PATH=" + filepath.Join(blocker, "vault")}, "VAULT_PATH", false},
		{"bad Gmail endpoint", []string{"GMAIL_API_ENDPOINT=ftp://example.com"}, "GMAIL_API_ENDPOINT", true},
		// The store opens while the server answers initialize: a client
		// gone before it failed does not hide the failure.
		{"store is a folder", []string{"MAILGATE_DB=" + t.TempDir()}, "MAILGATE_DB", false},
		{"store is a folder, agentmail", []string{"MAILGATE_DB=" + t.TempDir(), "MAILGATE_TOOLS=agentmail"}, "MAILGATE_DB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := append([]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=email"}, tt.env...)
			var out string
			var failed bool
			if tt.here {
				var code int
				out, code = runHere(t, "/", env, "serve")
				failed = code != 0
			} else {
				cmd := exec.Command(builtBinary(t), "serve")
				cmd.Dir = "/"
				cmd.Env = env
				cmd.Stdin = strings.NewReader("")
				b, err := cmd.CombinedOutput()
				out, failed = string(b), err != nil
			}
			if !failed {
				t.Fatalf("started despite %s:\n%s", tt.name, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			if !strings.Contains(last, tt.want) {
				t.Fatalf("error line %q does not name %q", last, tt.want)
			}
		})
	}
}

// TestServeStoreFailureEndsServer: the server answers initialize, then
// opens its store; a store that cannot open ends it, client still
// connected, with the error naming MAILGATE_DB as the last line, as before
// the answer came first. A client that has sent nothing yet does not keep
// the server from opening its store (and ending) either.
func TestServeStoreFailureEndsServer(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ tools, client string }{{"email", "initialize"}, {"agentmail", "initialize"}, {"mailbox", "initialize"}, {"mailbox", "silent"}} {
		tools := tc.tools
		t.Run(tools+"/"+tc.client, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), refusalWait)
			defer cancel()
			cmd := exec.CommandContext(ctx, builtBinary(t), "serve")
			cmd.Dir = "/"
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir(), "MAILGATE_TOOLS=" + tools, "MAILGATE_DB=" + t.TempDir(), "AGENT_NAME=alice"}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close() // the client stays connected until the server has ended
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.client == "initialize" {
				io.WriteString(stdin, initializeLine)
			}
			io.ReadAll(stdout) // the answer, if it came first, then the end
			err = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("the server did not end on an unusable store:\n%s", stderr.String())
			}
			if err == nil {
				t.Fatalf("the server ended without an error:\n%s", stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, "MAILGATE_DB") {
				t.Fatalf("error line %q does not name MAILGATE_DB", last)
			}
		})
	}
}

func readAudit(t *testing.T, home string) string {
	files, _ := filepath.Glob(filepath.Join(home, "audit", "*.jsonl"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestServeNewToolsOnTheRealConnection: the tools added after the first
// five reach Gmail through the connection a real server uses (gmail.Connector,
// OAuth token, GMAIL_API_ENDPOINT), not only through the sandbox's client:
// send_draft and trash_email write their request files, reply_all finds
// the thread's other recipients, list_labels and modify_labels answer.
func TestServeNewToolsOnTheRealConnection(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	cs := w.connectHere()

	text, isErr := call(t, cs, "draft_email", map[string]any{"to": "alice@example.com", "cc": []string{"bob@example.org"}, "subject": "Plan", "body": "Draft."})
	if isErr {
		t.Fatalf("draft_email = %q", text)
	}
	draftID := regexp.MustCompile(`Draft ID: (\S+?)\.`).FindStringSubmatch(text)[1]
	text, isErr = call(t, cs, "send_draft", map[string]any{"draft_id": draftID})
	if !isErr || !strings.Contains(text, "Pending_Approval/") || !strings.Contains(text, "bob@example.org") {
		t.Fatalf("send_draft = %q", text)
	}

	text, _ = call(t, cs, "search_email", map[string]any{"query": "invoice"})
	msgID := regexp.MustCompile(`Message ID: (\w+)`).FindStringSubmatch(text)[1]
	threadID := regexp.MustCompile(`Thread ID: (\w+)`).FindStringSubmatch(text)[1]
	text, isErr = call(t, cs, "trash_email", map[string]any{"message_id": msgID})
	if !isErr || !strings.Contains(text, "Pending_Approval/") {
		t.Fatalf("trash_email = %q", text)
	}
	text, isErr = call(t, cs, "reply_email", map[string]any{"message_id": msgID, "thread_id": threadID, "body": "Thanks.", "reply_all": true})
	if !isErr || !strings.Contains(text, "Pending_Approval/") {
		t.Fatalf("reply_email reply_all = %q", text)
	}
	if text, isErr = call(t, cs, "list_labels", map[string]any{}); isErr || !strings.Contains(text, "INBOX") {
		t.Fatalf("list_labels = %q", text)
	}
	if text, isErr = call(t, cs, "modify_labels", map[string]any{"message_ids": []string{msgID}, "actions": []string{"star"}}); isErr {
		t.Fatalf("modify_labels = %q", text)
	}
}
