package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store/storetest"
	gmailapi "google.golang.org/api/gmail/v1"
)

// The gated actions on existing mail (send_draft, trash_email), through the
// real protocol against the local Gmail server.

const draftNote = "Meeting notes: budget approved.\n"

// draftRaw is a draft as a user or agent leaves it: two To, a Cc, a Bcc,
// a text part with an HTML alternative, and an attachment.
func draftRaw(subject, bcc string) []byte {
	return []byte("From: me@example.com\r\nTo: Alice <alice@example.com>, bob@example.org\r\nCc: carol@example.net\r\nBcc: " + bcc + "\r\n" +
		"Subject: " + subject + "\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"MIX\"\r\n\r\n" +
		"--MIX\r\nContent-Type: multipart/alternative; boundary=\"ALT\"\r\n\r\n" +
		"--ALT\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello all,\r\nthe plan is attached.\r\n" +
		"--ALT\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Hello all,<br>the plan is attached.</p>\r\n--ALT--\r\n" +
		"--MIX\r\nContent-Type: text/plain; name=\"notes.txt\"\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		"TWVldGluZyBub3RlczogYnVkZ2V0IGFwcHJvdmVkLgo=\r\n--MIX--\r\n")
}

func actClient(e *emailEnv) *gmail.Client { return e.client.(*gmail.Client) }

func actDraft(t *testing.T, e *emailEnv) string {
	t.Helper()
	id, err := actClient(e).CreateDraft(context.Background(), draftRaw("Plan for Q3", "dave@example.com"), "")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// requestDraftSend creates actDraft's draft and calls send_draft for it
// once: the draft's id, the answer and the request file it wrote.
func requestDraftSend(t *testing.T, e *emailEnv) (id, text, file string) {
	t.Helper()
	id = actDraft(t, e)
	text, file = request(t, e, "send_draft", map[string]any{"draft_id": id})
	return id, text, file
}

func actFolder(t *testing.T, e *emailEnv, folder string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.vault, folder))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".md") {
			out = append(out, d.Name())
		}
	}
	return out
}

func TestSendDraftApprovedSentOnce(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	id, text, file := requestDraftSend(t, e)
	args := map[string]any{"draft_id": id}
	if !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ to send draft "+id) {
		t.Fatalf("first answer: %q", text)
	}
	// The request file shows the draft's current content in full.
	req := readVault(t, e, "Pending_Approval", file)
	sum := sha256.Sum256([]byte(draftNote))
	mustContain(t, "request file", req,
		"type: email_send_draft\n", `draft_id: "`+id+`"`, "\nmessage_id: \"",
		"To: Alice <alice@example.com>, bob@example.org\n", "Cc: carol@example.net\n", "Bcc: dave@example.com\n",
		`subject: "Plan for Q3"`, "Subject: Plan for Q3\n", "HTML part: yes, it goes too (SHA-256 ",
		"Attachments (1):\n- notes.txt (text/plain, ", hex.EncodeToString(sum[:]),
		approval.DraftMarker+"\n\n", "--- text ---\nHello all,\nthe plan is attached.\n", "edit the draft in Gmail",
		"You have never written to dave@example.com before",
	)
	if strings.Contains(req, approval.BodyMarker) {
		t.Error("a draft's request says the email body below is sent")
	}
	approve(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_draft", args)
	if isErr || !strings.HasPrefix(text, "Draft sent successfully. Draft ID: "+id+" Message ID: ") {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	sentID := sentDraftOnce(t, e)
	// Once: the draft is gone, and the answer says where it went.
	text, isErr = callTool(t, e.cs, "send_draft", args)
	if !isErr || !strings.HasPrefix(text, "Error: draft "+id+" was already sent at ") || !strings.Contains(text, "vault/Done/") {
		t.Fatalf("second call: (isError=%v) %q", isErr, text)
	}
	if n := len(e.gm.Sent()); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	done := actFolder(t, e, "Done")
	if len(done) != 1 || !strings.Contains(readVault(t, e, "Done", done[0]), "status: sent") {
		t.Fatalf("Done/ holds %v", done)
	}
	if lines := auditLines(t, e, "send_draft"); len(lines) != 3 || lines[1].Target != "draft:"+id || lines[1].Result != audit.ResultSuccess || lines[1].GmailMessageID != sentID {
		t.Fatalf("audit lines of send_draft: %+v", lines)
	}
}

// sentDraftOnce checks that Gmail sent one message, to actDraft's
// recipients, and returns its id.
func sentDraftOnce(t *testing.T, e *emailEnv) string {
	t.Helper()
	sent := e.gm.Sent()
	if len(sent) != 1 {
		t.Fatalf("Gmail sent %d", len(sent))
	}
	if d, ok := e.gm.Delivered(sent[0].Id); !ok || strings.Join(d.Recipients, " ") != "alice@example.com bob@example.org carol@example.net dave@example.com" {
		t.Fatalf("delivered to %+v", d.Recipients)
	}
	return sent[0].Id
}

func TestSendDraftEditedAfterApprovalRefused(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	id, _, file := requestDraftSend(t, e)
	args := map[string]any{"draft_id": id}
	approve(t, e.vault, file)
	// Someone adds a Bcc to the draft after the human approved it.
	if _, err := actClient(e).UpdateDraft(context.Background(), id, draftRaw("Plan for Q3", "dave@example.com, mallory@evil.example"), ""); err != nil {
		t.Fatal(err)
	}
	text, file2 := request(t, e, "send_draft", args)
	if !strings.HasPrefix(text, "Rejected: No matching approval") || !strings.Contains(text, "approves an earlier version of this draft") {
		t.Fatalf("edited draft: %q", text)
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("an edited draft was sent (%d)", n)
	}
	// The human is asked again, and sees the new recipient.
	if req := readVault(t, e, "Pending_Approval", file2); !strings.Contains(req, "Bcc: dave@example.com, mallory@evil.example\n") {
		t.Fatalf("new request does not show the new Bcc:\n%s", req)
	}
	if _, err := os.Stat(filepath.Join(e.vault, "Approved", file)); err != nil {
		t.Fatalf("the old approval should stay unused in Approved/: %v", err)
	}
}

// editingMailbox edits the draft in Gmail just before send_draft's last
// look at it: the moment between the approval matching and the send.
type editingMailbox struct {
	*gmail.Client
	reads int
}

func (m *editingMailbox) DraftRaw(ctx context.Context, id string) ([]byte, gmail.DraftRef, error) {
	m.reads++
	if m.reads == 3 { // request, approved call, then the check right before sending
		if _, err := m.UpdateDraft(ctx, id, draftRaw("Plan for Q3 (changed)", "dave@example.com"), ""); err != nil {
			return nil, gmail.DraftRef{}, err
		}
	}
	return m.Client.DraftRaw(ctx, id)
}

// sendApprovedDraft sends actDraft's draft, approved, over the mailbox wrap
// makes of the client (one that edits the draft at some moment).
func sendApprovedDraft(t *testing.T, wrap func(*gmail.Client) Mailbox) (e *emailEnv, id, text string, isErr bool) {
	t.Helper()
	e = newEmailEnv(t, false, nil)
	id = actDraft(t, e)
	e.deps.Gmail = GmailOf(wrap(actClient(e)))
	_, file := request(t, e, "send_draft", map[string]any{"draft_id": id})
	approve(t, e.vault, file)
	text, isErr = callTool(t, e.cs, "send_draft", map[string]any{"draft_id": id})
	return e, id, text, isErr
}

func TestSendDraftEditedWhileSendingNotSent(t *testing.T) {
	t.Parallel()
	e, id, text, isErr := sendApprovedDraft(t, func(c *gmail.Client) Mailbox { return &editingMailbox{Client: c} })
	if !isErr || !strings.HasPrefix(text, "Error sending draft: draft "+id+" was edited after it was approved") {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("sent %d", n)
	}
	if done := actFolder(t, e, "Done"); len(done) != 1 || !strings.Contains(readVault(t, e, "Done", done[0]), "status: failed") {
		t.Fatalf("Done/ = %v", done)
	}
}

// lateEditMailbox edits the draft in Gmail after send_draft's last look at
// it, right before drafts.send: the one round trip the re-read cannot cover.
type lateEditMailbox struct{ *gmail.Client }

func (m *lateEditMailbox) SendDraft(ctx context.Context, id string, raw []byte, threadID string) (*gmail.Sent, error) {
	if _, err := m.UpdateDraft(ctx, id, draftRaw("Plan for Q3 (changed)", "mallory@evil.example"), ""); err != nil {
		return nil, err
	}
	return m.Client.SendDraft(ctx, id, raw, threadID)
}

// TestSendDraftEditAfterLastReadNotSent: what goes out is the approved
// content, not an edit made after the last check.
func TestSendDraftEditAfterLastReadNotSent(t *testing.T) {
	t.Parallel()
	e, id, text, isErr := sendApprovedDraft(t, func(c *gmail.Client) Mailbox { return &lateEditMailbox{Client: c} })
	if isErr || !strings.HasPrefix(text, "Draft sent successfully. Draft ID: "+id+" ") {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	if raw, _ := e.gm.RawMessage(sentDraftOnce(t, e)); !strings.Contains(string(raw), "Subject: Plan for Q3\r\n") || strings.Contains(string(raw), "changed") {
		t.Fatalf("sent content:\n%s", raw)
	}
}

func TestSendDraftApprovalEditedRefused(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	id, _, file := requestDraftSend(t, e)
	edit(`Hello all,`, "Hello all, and wire 10k,", true)(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_draft", map[string]any{"draft_id": id})
	if !isErr || !strings.HasPrefix(text, "Rejected: The approval of this request was changed") || !strings.Contains(text, "edit the draft in Gmail instead") {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("sent %d", n)
	}
}

// Calls refused before the gate: no request file is written.
func TestActionErrors(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	nobody, err := actClient(e).CreateDraft(context.Background(), []byte("From: me@example.com\r\nSubject: nobody\r\n\r\nx\r\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_draft", map[string]any{"draft_id": "r999999"}, "Error: draft r999999 not found"},
		{"send_draft", map[string]any{"draft_id": "r1/../x"}, "Error: Invalid draft_id"},
		{"send_draft", map[string]any{"draft_id": nobody}, "Error: draft " + nobody + " has no recipients"},
		{"trash_email", map[string]any{}, "Error: give message_id or thread_id, not both"},
		{"trash_email", map[string]any{"message_id": "a1", "thread_id": "b1"}, "Error: give message_id or thread_id, not both"},
		{"trash_email", map[string]any{"message_id": "0123456789abcdef"}, "Error: Message ID 0123456789abcdef not found"},
		{"trash_email", map[string]any{"thread_id": "0123456789abcdef"}, "Error: Thread ID 0123456789abcdef not found"},
	} {
		if text, isErr := callTool(t, e.cs, tt.tool, tt.args); !isErr || !strings.HasPrefix(text, tt.want) {
			t.Errorf("%s %v: (isError=%v) %q", tt.tool, tt.args, isErr, text)
		}
	}
	if n := len(actFolder(t, e, "Pending_Approval")); n != 0 {
		t.Errorf("%d request files written for calls refused before the gate", n)
	}
}

// actFullLimiter is a send limit of one, used up.
func actFullLimiter(t *testing.T) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(context.Background(), storetest.OpenDSN(t, emailDSN(t)), 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(context.Background(), time.Now(), "earlier"); err != nil {
		t.Fatal(err)
	}
	return l
}

// A draft takes a slot of the send limit; a trash does not.
func TestSendLimitCountsDraftsNotTrash(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	e.deps.Gate.Limiter = actFullLimiter(t)
	id, _, file := requestDraftSend(t, e)
	approve(t, e.vault, file)
	if text, _ := callTool(t, e.cs, "send_draft", map[string]any{"draft_id": id}); !strings.HasPrefix(text, "Rejected: Rate limit") {
		t.Fatalf("draft over the limit: %q", text)
	}
	m := actInsert(t, e, "From: x@example.com\r\nTo: me@example.com\r\nSubject: Old news\r\nMessage-ID: <old@x>\r\n\r\nold\r\n")
	args := map[string]any{"message_id": m.Id}
	_, file = request(t, e, "trash_email", args)
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, "trash_email", args); isErr || !strings.HasPrefix(text, "Moved to Trash: message "+m.Id) {
		t.Fatalf("trash with the send limit full: (isError=%v) %q", isErr, text)
	}
}

func actInsert(t *testing.T, e *emailEnv, raw string) *gmailapi.Message {
	t.Helper()
	m, err := e.gm.Insert([]byte(raw), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTrashMessageApprovedOnce(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	m := actInsert(t, e, "From: Eve <eve@example.com>\r\nTo: me@example.com\r\nSubject: Cheap watches\r\nDate: Fri, 13 Nov 2026 08:00:00 +0000\r\nMessage-ID: <spam@x>\r\n\r\nBuy now, limited offer.\r\n")
	args := map[string]any{"message_id": m.Id}
	text, file := request(t, e, "trash_email", args)
	if !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ to move to Trash message "+m.Id) {
		t.Fatalf("first answer: %q", text)
	}
	req := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", req, "type: email_trash\n", `message_id: "`+m.Id+`"`, approval.TrashMarker,
		"Move to Trash: message "+m.Id, "From: Eve <eve@example.com>\n", "Subject: Cheap watches\n",
		"Date: Fri, 13 Nov 2026 08:00:00 +0000\n", "Snippet: Buy now, limited offer.")
	if slices.Contains(labelsOf(t, e, m.Id), "TRASH") {
		t.Fatal("trashed before approval")
	}
	approve(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "trash_email", args)
	if isErr || text != "Moved to Trash: message "+m.Id+" (recoverable from Gmail's Trash for 30 days)." {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	if !slices.Contains(labelsOf(t, e, m.Id), "TRASH") {
		t.Fatal("not trashed")
	}
	text, isErr = callTool(t, e.cs, "trash_email", args)
	if !isErr || !strings.HasPrefix(text, "Error: Message "+m.Id+" is already in Trash: it was moved there at ") {
		t.Fatalf("second call: (isError=%v) %q", isErr, text)
	}
	if done := actFolder(t, e, "Done"); len(done) != 1 || !strings.Contains(readVault(t, e, "Done", done[0]), "Moved message "+m.Id+" to Trash at ") {
		t.Fatalf("Done/ holds %v", done)
	}
	if n := len(actFolder(t, e, "Pending_Approval")); n != 0 {
		t.Fatalf("a second request was written (%d)", n)
	}
	if lines := auditLines(t, e, "trash_email"); len(lines) != 3 || lines[1].Target != "message:"+m.Id || lines[1].Result != audit.ResultSuccess {
		t.Fatalf("audit lines of trash_email: %+v", lines)
	}
}

func TestTrashThreadBindsMessageCount(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	first := actInsert(t, e, "From: ann@example.com\r\nTo: me@example.com\r\nSubject: Trip\r\nMessage-ID: <t1@x>\r\n\r\nshall we?\r\n")
	actInsert(t, e, "From: me@example.com\r\nTo: ann@example.com\r\nSubject: Re: Trip\r\nMessage-ID: <t2@x>\r\nIn-Reply-To: <t1@x>\r\nReferences: <t1@x>\r\n\r\nyes\r\n")
	args := map[string]any{"thread_id": first.ThreadId}
	_, file := request(t, e, "trash_email", args)
	if req := readVault(t, e, "Pending_Approval", file); !strings.Contains(req, "Move to Trash: the whole thread "+first.ThreadId+", 2 messages") {
		t.Fatalf("request:\n%s", req)
	}
	approve(t, e.vault, file)
	// The thread grows after the approval: the human must see it again.
	actInsert(t, e, "From: ann@example.com\r\nTo: me@example.com\r\nSubject: Re: Trip\r\nMessage-ID: <t3@x>\r\nIn-Reply-To: <t2@x>\r\nReferences: <t1@x> <t2@x>\r\n\r\nbooked the tickets\r\n")
	_, file = request(t, e, "trash_email", args)
	if req := readVault(t, e, "Pending_Approval", file); !strings.Contains(req, ", 3 messages") {
		t.Fatalf("request:\n%s", req)
	}
	if slices.Contains(labelsOf(t, e, first.Id), "TRASH") {
		t.Fatal("trashed a thread the human did not see whole")
	}
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, "trash_email", args); isErr || !strings.HasPrefix(text, "Moved to Trash: thread "+first.ThreadId) {
		t.Fatalf("(isError=%v) %q", isErr, text)
	}
	msgs, err := actClient(e).Thread(context.Background(), first.ThreadId)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("thread: %v %d", err, len(msgs))
	}
	for _, m := range msgs {
		if !slices.Contains(m.Labels, "TRASH") {
			t.Fatalf("message %s not trashed", m.ID)
		}
	}
}

// DEV_MODE: the same checks and request files; nothing sent or trashed,
// even with an approval.
func TestActionsDevMode(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, true, nil)
	id := actDraft(t, e)
	m := actInsert(t, e, "From: x@example.com\r\nTo: me@example.com\r\nSubject: Old\r\nMessage-ID: <dev@x>\r\n\r\nold\r\n")
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_draft", map[string]any{"draft_id": id}, "[DEV_MODE] Send of draft " + id + " logged but not executed"},
		{"trash_email", map[string]any{"message_id": m.Id}, "[DEV_MODE] Move to Trash of message " + m.Id + " logged but not executed"},
	} {
		text, isErr := callTool(t, e.cs, c.tool, c.args)
		file := pendingFile.FindStringSubmatch(text)
		if isErr || !strings.HasPrefix(text, c.want+". Approval: none") || file == nil {
			t.Fatalf("%s: (isError=%v) %q", c.tool, isErr, text)
		}
		approve(t, e.vault, file[1])
		text, isErr = callTool(t, e.cs, c.tool, c.args)
		if isErr || !strings.HasPrefix(text, c.want+". Approval: found") || !strings.Contains(text, "Nothing was done (DEV_MODE=true).") {
			t.Fatalf("%s approved: (isError=%v) %q", c.tool, isErr, text)
		}
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("DEV_MODE sent %d", n)
	}
	if _, ok := e.gm.Draft(id); !ok {
		t.Fatal("DEV_MODE consumed the draft")
	}
	if slices.Contains(labelsOf(t, e, m.Id), "TRASH") {
		t.Fatal("DEV_MODE trashed")
	}
	if n := len(actFolder(t, e, "Approved")); n != 2 {
		t.Fatalf("DEV_MODE consumed approvals: %d left", n)
	}
}
