package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

var draftIDRe = regexp.MustCompile(`Draft ID: (\S+) \|`)

// labelsOf is the label ids the local server holds for message id.
func labelsOf(t *testing.T, e *emailEnv, id string) []string {
	t.Helper()
	l, ok := e.gm.Labels(id)
	if !ok {
		t.Fatalf("message %s gone", id)
	}
	return l
}

func TestListAndUpdateDraft(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	text, isErr := callTool(t, e.cs, "list_drafts", map[string]any{})
	m := draftIDRe.FindStringSubmatch(text)
	if isErr || m == nil || !strings.Contains(text, "Topics for the Atlas design review") || !strings.HasPrefix(text, "Found 1 draft:\n--- BEGIN UNTRUSTED EMAIL DATA") {
		t.Fatalf("list_drafts: (%v) %q", isErr, text)
	}
	if text, _ := callTool(t, e.cs, "list_drafts", map[string]any{"query": "zebra"}); text != "No drafts found matching: zebra" {
		t.Fatalf("no match: %q", text)
	}
	// update_draft changes only drafts mailgate created: one of draft_email's.
	text, isErr = callTool(t, e.cs, "draft_email", map[string]any{"to": "priya@example.com", "subject": "Atlas review: topics", "body": "Old list."})
	m = regexp.MustCompile(`Draft ID: (\S+)\.`).FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("draft_email: (%v) %q", isErr, text)
	}
	id := m[1]

	text, isErr = callTool(t, e.cs, "update_draft", map[string]any{"draft_id": id, "to": "priya@example.com", "subject": "Atlas review: topics v2", "body": "New list."})
	if isErr || text != "Draft "+id+" updated. Review it in your Gmail drafts folder." {
		t.Fatalf("update_draft: (%v) %q", isErr, text)
	}
	d, ok := e.gm.Draft(id)
	if !ok {
		t.Fatal("draft gone after update")
	}
	raw, _ := e.gm.RawMessage(d.Message.Id)
	if !strings.Contains(string(raw), "Subject: Atlas review: topics v2") || !strings.Contains(string(raw), "New list.") {
		t.Fatalf("draft content not replaced: %q", raw)
	}
	text, _ = callTool(t, e.cs, "list_drafts", map[string]any{})
	if !strings.Contains(text, "Atlas review: topics v2") {
		t.Fatalf("list after update: %q", text)
	}

	// Refused before Gmail: the one validator, and ids that are not ids.
	before := e.gm.TotalCalls()
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"draft_id": id, "to": "not-an-email", "subject": "s", "body": "b"}, "Error: Invalid email address format: not-an-email"},
		{map[string]any{"draft_id": id, "to": "a@example.com", "subject": "hi\r\nBcc: x@example.com", "body": "b"}, "Error: "},
		{map[string]any{"draft_id": "../x", "to": "a@example.com", "subject": "s", "body": "b"}, "Error: invalid draft_id"},
	} {
		if text, isErr := callTool(t, e.cs, "update_draft", tt.args); !isErr || !strings.HasPrefix(text, tt.want) {
			t.Errorf("%v: (%v) %q", tt.args, isErr, text)
		}
	}
	if e.gm.TotalCalls() != before {
		t.Fatal("invalid update_draft reached Gmail")
	}
	// A draft mailgate created, since deleted in Gmail: not found.
	if err := e.deps.Drafts.Record(context.Background(), "r0000000000000000"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := callTool(t, e.cs, "update_draft", map[string]any{"draft_id": "r0000000000000000", "to": "a@example.com", "subject": "s", "body": "b"}); !isErr || !strings.Contains(text, "not found") {
		t.Fatalf("unknown draft: (%v) %q", isErr, text)
	}
}

// TestUpdateDraftDevMode: DEV_MODE logs the update and changes nothing.
func TestUpdateDraftDevMode(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	text, _ := callTool(t, e.cs, "list_drafts", map[string]any{})
	id := draftIDRe.FindStringSubmatch(text)[1]
	// As if draft_email had created it (in DEV_MODE it creates none).
	if err := e.deps.Drafts.Record(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	d0, _ := e.gm.Draft(id)
	text, isErr := callTool(t, e.cs, "update_draft", map[string]any{"draft_id": id, "to": "priya@example.com", "subject": "v2", "body": "b"})
	if isErr || !strings.HasPrefix(text, "[DEV_MODE] Draft update logged but not made.") {
		t.Fatalf("dev mode: (%v) %q", isErr, text)
	}
	if d1, _ := e.gm.Draft(id); d1.Message.Id != d0.Message.Id {
		t.Fatal("DEV_MODE changed the draft")
	}
}

func TestListLabels(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	text, isErr := callTool(t, e.cs, "list_labels", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	mustContain(t, "list_labels", text, "\n- INBOX | INBOX | system\n", "\n- Travel | ", "\n- Projects/Atlas | ", "\n- Builds | ")
}

// TestModifyLabels: names, ids and actions on messages and on a thread;
// unknown labels and bad targets refused with nothing changed; one audit
// line per call with its counts.
func TestModifyLabels(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	travel := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	travelLabel, _ := e.gm.LabelID("Travel")

	text, isErr := callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "actions": []string{"archive", "star"}, "remove_labels": []string{"travel"}})
	if isErr || text != "Labels changed on 1 message: added STARRED; removed INBOX, "+travelLabel+"." {
		t.Fatalf("modify_labels: (%v) %q", isErr, text)
	}
	if got := labelsOf(t, e, travel); slices.Contains(got, "INBOX") || !slices.Contains(got, "STARRED") || slices.Contains(got, travelLabel) {
		t.Fatalf("labels after archive+star-travel: %v", got)
	}
	text, _ = callTool(t, e.cs, "read_email", map[string]any{"message_id": travel})
	if !strings.Contains(text, "STARRED") || strings.Contains(text, "Labels: INBOX") {
		t.Fatalf("read_email after modify: %q", text)
	}

	// A thread: every message of "Atlas design review" marked read.
	text, _ = callTool(t, e.cs, "search_email", map[string]any{"query": `label:projects/atlas`, "max_results": 50})
	thread := regexp.MustCompile(`Thread ID: (\S+)`).FindStringSubmatch(text)[1]
	text, isErr = callTool(t, e.cs, "modify_labels", map[string]any{"thread_id": thread, "actions": []string{"read"}, "add_labels": []string{"Travel"}})
	if isErr || !strings.HasPrefix(text, "Labels changed on ") || !strings.Contains(text, " of thread "+thread) {
		t.Fatalf("thread: (%v) %q", isErr, text)
	}

	before := e.gm.TotalCalls()
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"message_ids": []string{travel}, "thread_id": thread, "actions": []string{"star"}}, "Error: give message_ids or thread_id, not both"},
		{map[string]any{"actions": []string{"star"}}, "Error: give message_ids or thread_id"},
		{map[string]any{"message_ids": []string{"x y"}, "actions": []string{"star"}}, "Error: invalid message_id"},
		{map[string]any{"message_ids": []string{travel}, "actions": []string{"star", "unstar"}}, "Error: label STARRED is both added and removed"},
		{map[string]any{"message_ids": []string{travel}}, "Error: nothing to change"},
	} {
		if text, isErr := callTool(t, e.cs, "modify_labels", tt.args); !isErr || !strings.HasPrefix(text, tt.want) {
			t.Errorf("%v: (%v) %q", tt.args, isErr, text)
		}
	}
	if e.gm.TotalCalls() != before {
		t.Fatal("refused modify_labels reached Gmail")
	}
	// Schema: an action that is not one is refused by the protocol layer.
	if _, isErr := callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "actions": []string{"delete"}}); !isErr {
		t.Fatal("unknown action accepted")
	}
	// An unknown label: refused, nothing created, nothing changed.
	text, isErr = callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "add_labels": []string{"Nope"}})
	if !isErr || !strings.Contains(text, `no label "Nope"`) || e.gm.Calls("messages.batchModify") != 1 {
		t.Fatalf("unknown label: (%v) %q, %d batchModify", isErr, text, e.gm.Calls("messages.batchModify"))
	}

	lines := auditLines(t, e, "modify_labels")
	if len(lines) != 8 {
		t.Fatalf("%d audit lines for 8 calls", len(lines))
	}
	if l := lines[0]; l.Result != "success" || l.Target != "messages:1" || l.Detail != "1 message; added STARRED; removed INBOX, "+travelLabel+"; 1 done" {
		t.Fatalf("first audit line: %+v", l)
	}
}

// TestModifyLabelsBatched: 2,500 messages go to Gmail as three
// batchModify calls of at most 1000, and all are changed.
func TestModifyLabelsBatched(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	var ids []string
	for i := range 2500 {
		m, err := e.gm.Insert([]byte(fmt.Sprintf("From: n@example.com\r\nTo: me@sandbox.local\r\nSubject: bulk %d\r\nMessage-ID: <bulk%d@x>\r\n\r\nbulk\r\n", i, i)), "INBOX", "UNREAD")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Id)
	}
	text, isErr := callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": ids, "actions": []string{"archive", "read"}})
	if isErr || text != "Labels changed on 2500 messages: removed INBOX, UNREAD." {
		t.Fatalf("(%v) %q", isErr, text)
	}
	if n := e.gm.Calls("messages.batchModify"); n != 3 {
		t.Fatalf("%d batchModify calls, want 3", n)
	}
	for _, id := range []string{ids[0], ids[999], ids[1000], ids[2499]} {
		if got := labelsOf(t, e, id); len(got) != 0 {
			t.Fatalf("message %s still has %v", id, got)
		}
	}
}

// TestOrganizeLimit: modify_labels and untrash_email share ORGANIZE_LIMIT,
// counted apart from sends; a refused call changes nothing; DEV_MODE
// changes nothing and takes no slot.
func TestOrganizeLimit(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	l, err := ratelimit.NewBucket(context.Background(), e.db, ratelimit.BucketOrganize, 2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	e.deps.OrganizeLimiter = l
	travel := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	for range 2 {
		if text, isErr := callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "actions": []string{"star"}}); isErr {
			t.Fatal(text)
		}
	}
	batches := e.gm.Calls("messages.batchModify")
	text, isErr := callTool(t, e.cs, "untrash_email", map[string]any{"message_id": travel})
	if !isErr || !strings.HasPrefix(text, "Error: organise limit reached (2 organising calls per hour: modify_labels, untrash_email, create_label, rename_label, delete_filter; ORGANIZE_LIMIT). Next call available in 60 minutes") {
		t.Fatalf("third call: (%v) %q", isErr, text)
	}
	text, isErr = callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "actions": []string{"unstar"}})
	if !isErr || !strings.Contains(text, "organise limit reached") || e.gm.Calls("messages.batchModify") != batches {
		t.Fatalf("over the limit: (%v) %q", isErr, text)
	}
	if slot, err := e.deps.Gate.Limiter.Check(context.Background(), time.Now()); err != nil || slot != 0 {
		t.Fatalf("organising used the send limit: %v %v", slot, err)
	}
}

func TestOrganiseDevMode(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	travel := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	before := labelsOf(t, e, travel)
	text, isErr := callTool(t, e.cs, "modify_labels", map[string]any{"message_ids": []string{travel}, "actions": []string{"archive"}})
	if isErr || text != "[DEV_MODE] Label change logged but not made (1 message): removed INBOX." {
		t.Fatalf("(%v) %q", isErr, text)
	}
	if after := labelsOf(t, e, travel); !slices.Equal(before, after) || e.gm.Calls("messages.batchModify") != 0 {
		t.Fatalf("DEV_MODE changed labels: %v -> %v", before, after)
	}
	logs, _ := filepath.Glob(filepath.Join(e.vault, "*", "dev_mode", "*", "MODIFY_LABELS_*.md"))
	if len(logs) != 1 {
		t.Fatalf("dev-mode logs: %v", logs)
	}
	if data, _ := os.ReadFile(logs[0]); !strings.Contains(string(data), travel) {
		t.Fatalf("dev log lacks the message: %s", data)
	}
	if retry, _ := e.deps.OrganizeLimiter.Check(context.Background(), time.Now()); retry != 0 {
		t.Fatal("DEV_MODE took a slot")
	}
}

func TestUntrashEmail(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	travel := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	c := e.client.(*gmail.Client)
	if _, err := c.TrashMessage(context.Background(), travel); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(labelsOf(t, e, travel), "TRASH") {
		t.Fatal("not trashed")
	}
	text, isErr := callTool(t, e.cs, "untrash_email", map[string]any{"message_id": travel})
	if isErr || text != "Message "+travel+" taken out of the trash." {
		t.Fatalf("(%v) %q", isErr, text)
	}
	if slices.Contains(labelsOf(t, e, travel), "TRASH") {
		t.Fatal("still in the trash")
	}
	msg, _ := e.gm.Message(travel)
	if _, err := c.TrashThread(context.Background(), msg.ThreadId); err != nil {
		t.Fatal(err)
	}
	text, isErr = callTool(t, e.cs, "untrash_email", map[string]any{"thread_id": msg.ThreadId})
	if isErr || !strings.HasPrefix(text, "Thread "+msg.ThreadId+" taken out of the trash (") {
		t.Fatalf("thread: (%v) %q", isErr, text)
	}
	for _, args := range []map[string]any{{}, {"message_id": travel, "thread_id": msg.ThreadId}} {
		if text, isErr := callTool(t, e.cs, "untrash_email", args); !isErr || !strings.HasPrefix(text, "Error: give message_ids or thread_id") {
			t.Errorf("%v: (%v) %q", args, isErr, text)
		}
	}
	if text, isErr := callTool(t, e.cs, "untrash_email", map[string]any{"message_id": "0123456789abcdef"}); !isErr || !strings.Contains(text, "not found") {
		t.Fatalf("unknown: (%v) %q", isErr, text)
	}
	if lines := auditLines(t, e, "untrash_email"); len(lines) != 5 || lines[0].Detail != "1 message; 1 untrashed" {
		t.Fatalf("audit: %+v", lines)
	}
}

// TestModifyLabelsRefusesTrashAndSpam is issue 32's reproduction: one
// modify_labels call with add_labels ["TRASH"] moved every inbox message
// of the sandbox to the trash (18 there), no approval asked. Now TRASH and SPAM,
// added or removed, by id or by name, on messages or a thread, are refused
// before Gmail is asked anything, and the answer points to trash_email.
func TestModifyLabelsRefusesTrashAndSpam(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	text, _ := callTool(t, e.cs, "search_email", map[string]any{"query": "in:inbox", "max_results": 50})
	var inbox []string
	for _, m := range regexp.MustCompile(`Message ID: (\S+)`).FindAllStringSubmatch(text, -1) {
		inbox = append(inbox, strings.TrimSuffix(m[1], ","))
	}
	if len(inbox) < 10 {
		t.Fatalf("the sandbox inbox has %d messages", len(inbox))
	}
	thread := regexp.MustCompile(`Thread ID: (\S+)`).FindStringSubmatch(text)[1]
	before := e.gm.Calls("messages.batchModify") + e.gm.Calls("threads.modify")
	for _, args := range []map[string]any{
		{"message_ids": inbox, "add_labels": []string{"TRASH"}},
		{"message_ids": inbox, "add_labels": []string{"trash"}},
		{"message_ids": inbox, "add_labels": []string{"SPAM"}},
		{"message_ids": inbox, "remove_labels": []string{"TRASH"}},
		{"message_ids": inbox, "remove_labels": []string{"SPAM"}, "actions": []string{"read"}},
		{"thread_id": thread, "add_labels": []string{"TRASH"}},
	} {
		text, isErr := callTool(t, e.cs, "modify_labels", args)
		if !isErr || !strings.Contains(text, "modify_labels does not add or remove") || !strings.Contains(text, "trash_email") {
			t.Errorf("%v: (%v) %q", args, isErr, text)
		}
	}
	if n := e.gm.Calls("messages.batchModify") + e.gm.Calls("threads.modify") - before; n != 0 {
		t.Fatalf("%d label changes reached Gmail", n)
	}
	for _, id := range inbox {
		if got := labelsOf(t, e, id); slices.Contains(got, "TRASH") || slices.Contains(got, "SPAM") || !slices.Contains(got, "INBOX") {
			t.Fatalf("message %s: labels %v", id, got)
		}
	}
}

// TestUpdateDraftRefusesUsersDraft is issue 32's item 5: update_draft
// rewrote a draft the user wrote in Gmail (a Bcc added: a copy leaks when
// they send it from Gmail, no approval involved). A draft mailgate did not
// create is now refused with a clear text and left as it was; send_draft
// of it stays behind the approval gate.
func TestUpdateDraftRefusesUsersDraft(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	text, _ := callTool(t, e.cs, "list_drafts", map[string]any{})
	id := draftIDRe.FindStringSubmatch(text)[1] // the sandbox user's own draft
	d0, _ := e.gm.Draft(id)
	raw0, _ := e.gm.RawMessage(d0.Message.Id)

	text, isErr := callTool(t, e.cs, "update_draft", map[string]any{"draft_id": id, "to": "priya@example.com",
		"bcc": []string{"leak@evil.test"}, "subject": "Topics for the Atlas design review", "body": "Same text."})
	if !isErr || text != fmt.Sprintf(draftNotMineText, id) {
		t.Fatalf("update_draft of the user's draft: (%v) %q", isErr, text)
	}
	if n := e.gm.Calls("drafts.update"); n != 0 {
		t.Fatalf("%d drafts.update calls", n)
	}
	d1, _ := e.gm.Draft(id)
	if raw1, _ := e.gm.RawMessage(d1.Message.Id); string(raw1) != string(raw0) || strings.Contains(string(raw1), "leak@evil.test") {
		t.Fatalf("the user's draft changed:\n%s", raw1)
	}
	// Sending it is still the gate's: a request file, nothing sent.
	text, isErr = callTool(t, e.cs, "send_draft", map[string]any{"draft_id": id})
	if !isErr || !strings.Contains(text, "approval") {
		t.Fatalf("send_draft: (%v) %q", isErr, text)
	}
	if n := e.gm.Calls("drafts.send") + e.gm.Calls("messages.send"); n != 0 {
		t.Fatalf("send_draft sent without approval (%d calls)", n)
	}
}
