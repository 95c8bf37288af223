package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// These tests run issue 17's sending features through the real protocol
// against the local Gmail server: every recipient, the HTML part and every
// attachment are bound by the approval.

// pendingNames lists Pending_Approval/.
func pendingNames(t *testing.T, e *emailEnv) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(e.vault, "Pending_Approval", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// delivered returns what the recipients of the only sent message received.
func delivered(t *testing.T, e *emailEnv) (*mail.Message, []string) {
	t.Helper()
	sent := e.gm.Sent()
	if len(sent) != 1 {
		t.Fatalf("Gmail sent %d messages, want 1", len(sent))
	}
	d, ok := e.gm.Delivered(sent[0].Id)
	if !ok {
		t.Fatal("no delivery")
	}
	m, err := mail.ReadMessage(bytes.NewReader(d.Raw))
	if err != nil {
		t.Fatal(err)
	}
	return m, d.Recipients
}

// approveAndResend approves the request file and repeats the call, which
// must send.
func approveAndResend(t *testing.T, e *emailEnv, tool, file string, args map[string]any) {
	t.Helper()
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, tool, args); isErr || !strings.HasPrefix(text, "Email sent successfully.") {
		t.Fatalf("%s after approval: (isError=%v) %q", tool, isErr, text)
	}
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func TestEveryRecipientIsBound(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": []any{"alice@example.com", "Bob <bob@example.com>"}, "cc": []any{"carol@example.com"},
		"subject": "Plan", "body": "Hi all,\nthe plan.\n"}
	text, file := request(t, e, "send_email", args)
	mustContain(t, "answer", text, "To: alice@example.com, bob@example.com", "Cc: carol@example.com")
	body := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", body, "to:\n  - \"alice@example.com\"\n  - \"Bob <bob@example.com>\"\n", "cc:\n  - \"carol@example.com\"\n",
		"- To: alice@example.com", "- Cc: carol@example.com")
	approve(t, e.vault, file)

	// A bcc added after the approval is another email: not sent, the
	// approval kept, a new request listing the bcc written.
	withBcc := map[string]any{"bcc": []any{"mallory@example.com"}}
	for k, v := range args {
		withBcc[k] = v
	}
	text, isErr := callTool(t, e.cs, "send_email", withBcc)
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval") || len(e.gm.Sent()) != 0 {
		t.Fatalf("bcc added after approval: (isError=%v, sent %d) %q", isErr, len(e.gm.Sent()), text)
	}
	newFile := pendingFile.FindStringSubmatch(text)[1]
	mustContain(t, "new request", readVault(t, e, "Pending_Approval", newFile), "bcc:\n  - \"mallory@example.com\"\n",
		"- Bcc: mallory@example.com (blind copy")
	if _, err := os.Stat(filepath.Join(e.vault, "Approved", file)); err != nil {
		t.Fatalf("the approval of the email without bcc was touched: %v", err)
	}

	// The approved email goes to exactly its recipients, bare addresses.
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr || !strings.HasPrefix(text, "Email sent successfully.") {
		t.Fatalf("approved call: (isError=%v) %q", isErr, text)
	}
	m, rcpts := delivered(t, e)
	if got := strings.Join(rcpts, ","); got != "alice@example.com,bob@example.com,carol@example.com" {
		t.Fatalf("delivered to %s", got)
	}
	if to, cc := m.Header.Get("To"), m.Header.Get("Cc"); !strings.Contains(to, "bob@example.com") || strings.Contains(to, "Bob") || cc != "<carol@example.com>" && cc != "carol@example.com" {
		t.Fatalf("To %q Cc %q", to, cc)
	}
}

func TestBccSentAndCcEditedInTheFileRefused(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "bcc": []any{"boss@example.com"}, "subject": "Hi", "body": "Hello.\n"}
	_, file := request(t, e, "send_email", args)
	approveAndResend(t, e, "send_email", file, args)
	m, rcpts := delivered(t, e)
	if strings.Join(rcpts, ",") != "alice@example.com,boss@example.com" || m.Header.Get("Bcc") != "" {
		t.Fatalf("delivered to %v with Bcc header %q", rcpts, m.Header.Get("Bcc"))
	}

	// A human adding a Cc line to the file cannot widen the approval.
	e = newEmailEnv(t, false, nil)
	args = map[string]any{"to": "alice@example.com", "cc": []any{"carol@example.com"}, "subject": "Hi", "body": "Hello.\n"}
	_, file = request(t, e, "send_email", args)
	edit(`  - "carol@example.com"\n`, "  - \"carol@example.com\"\n  - \"mallory@example.com\"\n", true)(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.HasPrefix(text, "Rejected: The approver changed this email") || len(e.gm.Sent()) != 0 {
		t.Fatalf("cc edited in the approval: (isError=%v) %q", isErr, text)
	}
}

// attachEnv is an email env whose attachment folder holds report.txt.
func attachEnv(t *testing.T) (*emailEnv, string) {
	t.Helper()
	e := newEmailEnv(t, false, nil)
	dir := filepath.Join(t.TempDir(), "attachments")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.txt"), []byte("Q3 numbers: 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.deps.Attachments = attach.Folder{Dir: dir}
	return e, dir
}

func TestAttachmentBoundAndChangedFileRefused(t *testing.T) {
	t.Parallel()
	e, dir := attachEnv(t)
	args := map[string]any{"to": "alice@example.com", "cc": []any{"carol@example.com"}, "subject": "Report", "body": "Attached.\n",
		"attachments": []any{"report.txt"}}
	text, file := request(t, e, "send_email", args)
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte("Q3 numbers: 42\n")))
	mustContain(t, "answer", text, "Attachment: report.txt (15 bytes, sha256 "+sum+")")
	mustContain(t, "request file", readVault(t, e, "Pending_Approval", file),
		"attachments:\n  - \"report.txt (15 bytes, sha256 "+sum+")\"\n", "**Attachments**")
	approve(t, e.vault, file)

	// Changed after the approval: not sent, the new content is a new request.
	os.WriteFile(filepath.Join(dir, "report.txt"), []byte("Q3 numbers: 43\n"), 0o600)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.HasPrefix(text, "Rejected: No matching approval") || len(e.gm.Sent()) != 0 {
		t.Fatalf("changed attachment: (isError=%v) %q", isErr, text)
	}
	mustContain(t, "answer", text, "if a file changed after the human approved an earlier request, that approval no longer applies")
	newSum := fmt.Sprintf("%x", sha256.Sum256([]byte("Q3 numbers: 43\n")))
	mustContain(t, "new request", readVault(t, e, "Pending_Approval", pendingFile.FindStringSubmatch(text)[1]), newSum)

	// Changed back: the approved file is what goes.
	os.WriteFile(filepath.Join(dir, "report.txt"), []byte("Q3 numbers: 42\n"), 0o600)
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr {
		t.Fatalf("approved: %q", text)
	}
	m, _ := delivered(t, e)
	mt, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if mt != "multipart/mixed" {
		t.Fatalf("Content-Type %s", mt)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	mr.NextPart()
	p, err := mr.NextPart()
	if err != nil || p.FileName() != "report.txt" {
		t.Fatalf("attachment part %v %v", p, err)
	}
}

// TestAttachmentChangedBeforeTheClaimRefused: the files are read again when
// the request binds them, and checked against what was opened; those bytes
// are the ones the email is built from (TestSentEmailIsTheOneRequested).
func TestAttachmentChangedBeforeTheClaimRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	os.WriteFile(path, []byte("one"), 0o600)
	h := &emailHandlers{d: &EmailDeps{Attachments: attach.Folder{Dir: dir}}}
	x, err := h.openExtras("", "body", []string{"a.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("two"), 0o600)
	_, err = x.bind(approvalReq())
	var ce *attach.ChangedError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "changed since it was approved") {
		t.Fatalf("got %v, want a ChangedError", err)
	}
}

func TestAttachmentPathsRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	e, dir := attachEnv(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"absolute outside", outside, "not inside the attachment folder"},
		{"dot-dot", "../" + filepath.Base(filepath.Dir(outside)) + "/secret.txt", "refused"},
		{"symlink leading out", "link.txt", "not inside the attachment folder"},
		{"missing", "nope.txt", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range []string{"send_email", "draft_email"} {
				text, isErr := callTool(t, e.cs, tool, map[string]any{"to": "alice@example.com", "subject": "S", "body": "B",
					"attachments": []any{tc.path}})
				if !isErr || !strings.HasPrefix(text, "Error: attachment") || !strings.Contains(text, tc.want) {
					t.Fatalf("%s: (isError=%v) %q", tool, isErr, text)
				}
			}
			if n := pendingNames(t, e); len(n) != 0 || len(e.gm.Sent()) != 0 {
				t.Fatalf("a refused path wrote %v", n)
			}
		})
	}
}

func TestMessageTooLargeAnsweredClearly(t *testing.T) {
	t.Parallel()
	e, dir := attachEnv(t)
	e.deps.Attachments = attach.Folder{Dir: dir, MaxFileBytes: 40_000_000, MaxTotalBytes: 40_000_000}
	os.WriteFile(filepath.Join(dir, "big.bin"), bytes.Repeat([]byte{7}, 19_000_000), 0o600)
	text, isErr := callTool(t, e.cs, "send_email", map[string]any{"to": "alice@example.com", "subject": "S", "body": "B",
		"attachments": []any{"big.bin"}})
	if !isErr || !strings.HasPrefix(text, "Error: message too large") || !strings.Contains(text, "25 MB") || len(pendingNames(t, e)) != 0 {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
}

func TestMarkdownBodyArrivesAsAlternative(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "Notes", "body": "Hello **Alice**,\n\n- one\n- two\n", "body_format": "markdown"}
	text, file := request(t, e, "send_email", args)
	mustContain(t, "answer", text, "An HTML part goes too")
	mustContain(t, "request file", readVault(t, e, "Pending_Approval", file), "html_sha256: ", "**An HTML part goes too", "Hello **Alice**")
	approveAndResend(t, e, "send_email", file, args)
	m, _ := delivered(t, e)
	mt, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if mt != "multipart/alternative" {
		t.Fatalf("Content-Type %s", m.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	var types []string
	var html string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		types = append(types, strings.Split(p.Header.Get("Content-Type"), ";")[0])
		b, _ := io.ReadAll(p)
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			html = string(b)
		}
	}
	if strings.Join(types, ",") != "text/plain,text/html" || !strings.Contains(html, "<strong>Alice</strong>") {
		t.Fatalf("parts %v, html %q", types, html)
	}

	// The format is part of what is approved: the same text as plain text
	// is another email.
	plain := map[string]any{"to": "alice@example.com", "subject": "Notes", "body": "Hello **Alice**,\n\n- one\n- two\n"}
	if text, _ := callTool(t, e.cs, "send_email", plain); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("plain text of an approved Markdown email: %q", text)
	}
}

func TestReplyAllExcludesOwnAddressesAndKeepsCc(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	e.gm.Insert([]byte("From: Dan <dan@example.com>\r\nTo: Me <me@example.com>, Erin <erin@example.com>\r\n"+
		"Cc: ME.ALIAS@example.com, Frank <frank@example.com>, dan@example.com\r\nSubject: Offsite\r\nMessage-ID: <off@example.com>\r\n\r\nWho comes?\r\n"), "INBOX")
	msg, thread := searchIDs(t, e, `subject:Offsite`)
	args := map[string]any{"thread_id": thread, "message_id": msg, "body": "I do.", "reply_all": true}
	gets := e.gm.Calls("messages.get")
	text, file := request(t, e, "reply_email", args)
	// One messages.get: the message's text, kept beside the new request
	// for the approver (email_original.go); To and Cc need no other.
	if n := e.gm.Calls("messages.get") - gets; n != 1 {
		t.Errorf("reply_all read the parent again (%d messages.get, 1 being the text kept for the approver): its To and Cc come with its headers", n)
	}
	mustContain(t, "answer", text, "To: dan@example.com, erin@example.com (reply in thread", "Cc: frank@example.com")
	body := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", body, "- To: dan@example.com", "- To: erin@example.com", "- Cc: frank@example.com")
	if strings.Contains(strings.ToLower(body), "me@example.com") || strings.Contains(strings.ToLower(body), "me.alias@") {
		t.Fatalf("the user's own address is a recipient:\n%s", body)
	}
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, "reply_email", args); isErr || !strings.HasPrefix(text, "Reply sent successfully.") {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	m, rcpts := delivered(t, e)
	if strings.Join(rcpts, ",") != "dan@example.com,erin@example.com,frank@example.com" || !strings.Contains(m.Header.Get("Cc"), "frank@example.com") {
		t.Fatalf("delivered to %v, Cc %q", rcpts, m.Header.Get("Cc"))
	}

	// Without reply_all the reply goes to the sender alone, as before.
	e = newEmailEnv(t, false, nil)
	e.gm.Insert([]byte("From: Dan <dan@example.com>\r\nTo: me@example.com, erin@example.com\r\nSubject: Offsite\r\nMessage-ID: <off@example.com>\r\n\r\nWho comes?\r\n"), "INBOX")
	msg, thread = searchIDs(t, e, `subject:Offsite`)
	text, _ = request(t, e, "reply_email", map[string]any{"thread_id": thread, "message_id": msg, "body": "I do."})
	if strings.Contains(text, "erin@") {
		t.Fatalf("a plain reply includes the other recipients: %q", text)
	}
}

// invoiceEmail is a vendor's invoice with a 23-byte PDF attached, for the
// tests that answer or forward a received email with an attachment.
const invoiceEmail = "From: Vendor <vendor@example.org>\r\nTo: me@example.com\r\nCc: Ops <ops@example.org>\r\nSubject: Invoice 7\r\nDate: Tue, 10 Nov 2026 09:30:00 +0000\r\n" +
	"Message-ID: <inv7@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n" +
	"--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nPlease pay invoice 7 to our NEW account.\r\n" +
	"--XX\r\nContent-Type: application/pdf; name=\"invoice7.pdf\"\r\nContent-Disposition: attachment; filename=\"invoice7.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
	"JVBERi0xLjQgZmFrZSBwZGYgYnl0ZXM=\r\n--XX--\r\n"

// insertInvoice puts invoiceEmail in e's inbox and returns its message and
// thread ids.
func insertInvoice(t *testing.T, e *emailEnv) (msg, thread string) {
	t.Helper()
	if _, err := e.gm.Insert([]byte(invoiceEmail), "INBOX"); err != nil {
		t.Fatal(err)
	}
	return searchIDs(t, e, `subject:Invoice`)
}

func TestForwardKeepsAttachments(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	pdf := []byte("%PDF-1.4 fake pdf bytes")
	msg, _ := insertInvoice(t, e)
	args := map[string]any{"message_id": msg, "to": "accounts@example.com", "cc": []any{"boss@example.com"}, "note": "For payment."}
	text, file := request(t, e, "forward_email", args)
	mustContain(t, "answer", text, "Rejected: No matching approval file found in vault/Approved/ for forwarding message "+msg,
		"forward_email again", "Subject: Fwd: Invoice 7\n", "Attachment: invoice7.pdf (23 bytes")
	body := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", body, "type: email_forward", "message_id: \""+msg+"\"", "- To: accounts@example.com",
		"- Cc: boss@example.com", "From: Vendor <vendor@example.org>", "Subject: Invoice 7\n", "Date: Tue, 10 Nov 2026",
		"invoice7.pdf (23 bytes", "For payment.\n\n"+mailmsg.ForwardHeading, "Please pay invoice 7 to our NEW account.")
	approveAndResend(t, e, "forward_email", file, args)
	m, rcpts := delivered(t, e)
	if strings.Join(rcpts, ",") != "accounts@example.com,boss@example.com" || m.Header.Get("Subject") != "Fwd: Invoice 7" {
		t.Fatalf("delivered to %v, subject %q", rcpts, m.Header.Get("Subject"))
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	mr.NextPart()
	p, err := mr.NextPart()
	if err != nil || p.FileName() != "invoice7.pdf" {
		t.Fatalf("attachment part: %v", err)
	}
	got, _ := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p))
	if !bytes.Equal(got, pdf) {
		t.Fatalf("forwarded attachment bytes %q", got)
	}
}

func approvalReq() approval.Request {
	return approval.Request{Kind: approval.KindSend, To: "alice@example.com", Subject: "S", Body: "body"}
}

// TestHTMLBodySanitizedWithTextAlternative: an HTML body is sanitized, the
// approver reads its text rendering, and a correction of that text cannot
// be sent (the HTML part could not follow it).
func TestHTMLBodySanitizedWithTextAlternative(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"to": "alice@example.com", "subject": "News", "body_format": "html",
		"body": "<p>Hello <b>Alice</b></p><script>steal()</script>"}
	text, file := request(t, e, "send_email", args)
	if !strings.Contains(text, "Hello Alice") || strings.Contains(text, "<script>") || !strings.Contains(text, "An HTML part goes too") {
		t.Fatalf("the approver is not shown the text of the HTML: %q", text)
	}
	approveAndResend(t, e, "send_email", file, args)
	raw, _ := e.gm.RawMessage(e.gm.Sent()[0].Id)
	if s := string(raw); !strings.Contains(s, "multipart/alternative") || strings.Contains(s, "steal()") || !strings.Contains(s, "<b>Alice</b>") {
		t.Fatalf("sent:\n%s", s)
	}

	e = newEmailEnv(t, false, nil)
	_, file = request(t, e, "send_email", args)
	edit(`Hello Alice`, "Hello Mallory", true)(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.Contains(text, "cannot follow the correction") || len(e.gm.Sent()) != 0 {
		t.Fatalf("corrected text of an HTML email: (isError=%v) %q", isErr, text)
	}
}

// TestDraftWithCcBccAndAttachment: drafts take the same recipients and
// files, without approval (nothing is sent).
func TestDraftWithCcBccAndAttachment(t *testing.T) {
	t.Parallel()
	e, _ := attachEnv(t)
	id := newDraft(t, e, map[string]any{"to": []any{"alice@example.com", "bob@example.com"},
		"cc": []any{"carol@example.com"}, "bcc": []any{"dave@example.com"}, "subject": "Draft", "body": "Hi.", "attachments": []any{"report.txt"}})
	draftHolds(t, e, id, "bob@example.com", "carol@example.com", "dave@example.com", "report.txt")
}

// newDraft creates a draft with draft_email and returns its id.
func newDraft(t *testing.T, e *emailEnv, args map[string]any) string {
	t.Helper()
	text, isErr := callTool(t, e.cs, "draft_email", args)
	id := regexp.MustCompile(`Draft ID: (\S+)\.`).FindStringSubmatch(text)
	if isErr || id == nil {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	return id[1]
}

// draftHolds checks that draft id's To, Cc and Bcc hold to, cc and bcc, and
// its raw message each of more; it returns the draft's message id.
func draftHolds(t *testing.T, e *emailEnv, id, to, cc, bcc string, more ...string) string {
	t.Helper()
	d, ok := e.gm.Draft(id)
	if !ok {
		t.Fatal("no draft")
	}
	raw, _ := base64.URLEncoding.DecodeString(d.Message.Raw)
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	ok = strings.Contains(m.Header.Get("To"), to) && strings.Contains(m.Header.Get("Cc"), cc) && strings.Contains(m.Header.Get("Bcc"), bcc)
	for _, s := range more {
		ok = ok && strings.Contains(string(raw), s)
	}
	if !ok {
		t.Fatalf("draft:\n%s", raw)
	}
	return d.Message.Id
}

// TestUpdateDraftWithCcBccAndAttachment: update_draft takes draft_email's
// inputs (the same code checks them): the draft keeps its id and holds the
// new recipients, the HTML part and the attachment.
func TestUpdateDraftWithCcBccAndAttachment(t *testing.T) {
	t.Parallel()
	e, _ := attachEnv(t)
	id := newDraft(t, e, map[string]any{"to": "alice@example.com", "subject": "Draft", "body": "Hi."})
	text, isErr := callTool(t, e.cs, "update_draft", map[string]any{"draft_id": id, "to": []any{"alice@example.com", "bob@example.com"},
		"cc": []any{"carol@example.com"}, "bcc": []any{"dave@example.com"}, "subject": "Draft v2", "body": "Hi **all**.",
		"body_format": "markdown", "attachments": []any{"report.txt"}})
	if isErr || text != "Draft "+id+" updated. Review it in your Gmail drafts folder." {
		t.Fatalf("update_draft: (isError=%v) %q", isErr, text)
	}
	msgID := draftHolds(t, e, id, "bob@example.com", "carol@example.com", "dave@example.com",
		"Subject: Draft v2", "report.txt", "text/html")

	// A path outside the folder is refused as draft_email refuses it, and
	// the draft is left as it was.
	text, isErr = callTool(t, e.cs, "update_draft", map[string]any{"draft_id": id, "to": "alice@example.com", "subject": "s", "body": "b",
		"attachments": []any{"../secret.txt"}})
	if !isErr || !strings.HasPrefix(text, "Error: ") {
		t.Fatalf("outside path: (isError=%v) %q", isErr, text)
	}
	if d2, _ := e.gm.Draft(id); d2.Message.Id != msgID {
		t.Fatal("a refused update_draft changed the draft")
	}
}

// TestNewRecipientWarningsAskOncePerAddress: a request to several
// recipients asks Gmail's Sent folder once per distinct address (the
// lookups of one request run side by side), warns for each one never
// written to, and a second request to the same people asks nothing more.
func TestNewRecipientWarningsAskOncePerAddress(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	before := e.gm.Calls("messages.list")
	args := map[string]any{"to": []any{"alice@example.com", "ALICE@example.com"}, "cc": []any{"carol@example.com"},
		"bcc": []any{"dave@example.com"}, "subject": "Hi", "body": "Hello.\n"}
	text, _ := callTool(t, e.cs, "send_email", args)
	if n := e.gm.Calls("messages.list") - before; n != 3 {
		t.Errorf("Sent searched %d times for three distinct recipients, want 3", n)
	}
	for _, a := range []string{"carol@example.com", "dave@example.com"} {
		if !strings.Contains(text, "You have never written to "+a) {
			t.Errorf("no new-recipient warning for %s:\n%s", a, text)
		}
	}
	args["subject"] = "Hi again"
	before = e.gm.Calls("messages.list")
	callTool(t, e.cs, "send_email", args)
	if n := e.gm.Calls("messages.list") - before; n != 0 {
		t.Errorf("Sent searched %d times again for the same recipients, want 0", n)
	}
}
