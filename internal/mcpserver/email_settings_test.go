package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/gmail"
)

// Labels, filters and the vacation responder (issue 27), through the real
// protocol against the local Gmail server (whose every answer is held to
// Google's discovery document).

func labelByName(t *testing.T, e *emailEnv, name string) (gmail.Label, bool) {
	t.Helper()
	labels, err := actClient(e).ListLabels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range labels {
		if l.Name == name {
			return l, true
		}
	}
	return gmail.Label{}, false
}

func TestLabelsCreateRenameAndGatedDelete(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	text, isErr := callTool(t, e.cs, "create_label", map[string]any{"name": "Projects/Acme", "label_list_visibility": "labelShowIfUnread",
		"text_color": "#FFFFFF", "background_color": "#16a766"})
	if isErr || !strings.HasPrefix(text, `Label created: "Projects/Acme" (id Label_`) || !strings.Contains(text, "colour #ffffff on #16a766") {
		t.Fatalf("create_label: (isError=%v) %q", isErr, text)
	}
	l, ok := labelByName(t, e, "Projects/Acme")
	if !ok {
		t.Fatal("no label made")
	}
	// A colour off Gmail's palette is Gmail's refusal, passed on.
	if text, isErr := callTool(t, e.cs, "create_label", map[string]any{"name": "X", "text_color": "#123456", "background_color": "#16a766"}); !isErr || !strings.Contains(text, "palette") {
		t.Fatalf("off-palette colour: (isError=%v) %q", isErr, text)
	}
	text, isErr = callTool(t, e.cs, "rename_label", map[string]any{"label": "projects/acme", "new_name": "Clients/Acme", "message_list_visibility": "hide"})
	if isErr || !strings.Contains(text, `Label changed (was "Projects/Acme"): "Clients/Acme" (id `+l.ID) || !strings.Contains(text, "message list: hide") {
		t.Fatalf("rename_label: (isError=%v) %q", isErr, text)
	}
	if text, isErr := callTool(t, e.cs, "rename_label", map[string]any{"label": "INBOX", "new_name": "Mine"}); !isErr || !strings.Contains(text, "system label") {
		t.Fatalf("renaming INBOX: (isError=%v) %q", isErr, text)
	}
	// Put the label on a message, then ask to delete it: a request, and
	// the label is still there.
	mid, _ := searchIDs(t, e, "in:inbox")
	if _, err := actClient(e).ModifyMessages(context.Background(), []string{mid}, gmail.LabelChange{Add: []string{l.ID}}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"label": "Clients/Acme"}
	text, file := request(t, e, "delete_label", args)
	mustContain(t, "answer", text, "Rejected: No matching approval file found in vault/Approved/ to delete label \"Clients/Acme\" ("+l.ID+")",
		"is on 1 messages in 1 threads now", "cannot be undone")
	req := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", req, "type: gmail_label_delete\n", `target: "label:`+l.ID+`"`, "## What will be deleted (cannot be undone)",
		`Delete the user label "Clients/Acme" (id `+l.ID+")")
	if _, ok := labelByName(t, e, "Clients/Acme"); !ok || e.gm.Calls("labels.delete") != 0 {
		t.Fatal("the label was deleted without an approval")
	}
	approve(t, e.vault, file)
	text, isErr = callTool(t, e.cs, "delete_label", args)
	if isErr || !strings.HasPrefix(text, `Done, as the user approved: delete label "Clients/Acme" (`+l.ID+").") {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	if _, ok := labelByName(t, e, "Clients/Acme"); ok {
		t.Fatal("label still there")
	}
	if labels, _ := e.gm.Labels(mid); strings.Contains(strings.Join(labels, ","), l.ID) {
		t.Fatalf("message keeps the deleted label: %v", labels)
	}
	// Once: the next identical call finds no such label; Gmail saw one delete.
	if text, isErr := callTool(t, e.cs, "delete_label", args); !isErr || !strings.Contains(text, "no label") {
		t.Fatalf("second call: (isError=%v) %q", isErr, text)
	}
	if n := e.gm.Calls("labels.delete"); n != 1 {
		t.Fatalf("labels.delete called %d times", n)
	}
	if done := actFolder(t, e, "Done"); len(done) != 1 || !strings.Contains(readVault(t, e, "Done", done[0]), "status: sent") {
		t.Fatalf("Done/ holds %v", done)
	}
}

func TestForwardingFilterIsARequestNotAFilter(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	// Gmail forwards only to verified forwarding addresses (TestFilterForwardUnverifiedRefused).
	e.gm.AddForwardingAddress("mallory@evil.example", true)
	e.gm.AddForwardingAddress("mallory@evil2.example", true)
	args := map[string]any{"from": "billing@vendor.example", "forward": "mallory@evil.example", "remove_labels": []any{"INBOX", "UNREAD"}}
	text, file := request(t, e, "create_filter", args)
	mustContain(t, "answer", text, "Rejected: No matching approval file found in vault/Approved/ to create filter: ",
		"This filter FORWARDS every matching email to mallory@evil.example")
	if n := len(e.gm.Filters()); n != 0 || e.gm.Calls("settings.filters.create") != 0 {
		t.Fatalf("%d filters exist before approval", n)
	}
	req := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", req, "type: gmail_filter_create\n", `target: "filter"`,
		"WARNING: every matching email will be FORWARDED to mallory@evil.example.",
		"- from \"billing@vendor.example\"\n", "- FORWARD it to mallory@evil.example\n", "- archive it (skip the inbox)\n", "- mark it as read\n")
	if text, isErr := callTool(t, e.cs, "list_filters", map[string]any{}); isErr || !strings.HasPrefix(text, "0 filters") {
		t.Fatalf("list_filters before: %q", text)
	}
	// Another forwarding address is another request, even with this one approved.
	approve(t, e.vault, file)
	other := map[string]any{"from": "billing@vendor.example", "forward": "mallory@evil2.example", "remove_labels": []any{"INBOX", "UNREAD"}}
	if text, isErr := callTool(t, e.cs, "create_filter", other); !isErr || !strings.Contains(text, "Request file:") {
		t.Fatalf("another address: (isError=%v) %q", isErr, text)
	}
	if n := len(e.gm.Filters()); n != 0 {
		t.Fatal("an approval for one forwarding address made a filter for another")
	}
	text, isErr := callTool(t, e.cs, "create_filter", args)
	if isErr || !strings.Contains(text, "Filter ID: ANe1Bm") {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	fs := e.gm.Filters()
	if len(fs) != 1 || fs[0].Action.Forward != "mallory@evil.example" || fs[0].Criteria.From != "billing@vendor.example" ||
		strings.Join(fs[0].Action.RemoveLabelIds, ",") != "INBOX,UNREAD" {
		t.Fatalf("filters: %+v", fs)
	}
	// Once.
	if text, isErr := callTool(t, e.cs, "create_filter", args); !isErr || !strings.Contains(text, "Request file:") {
		t.Fatalf("second call: (isError=%v) %q", isErr, text)
	}
	if n := e.gm.Calls("settings.filters.create"); n != 1 {
		t.Fatalf("filters.create called %d times", n)
	}
	text, _ = callTool(t, e.cs, "list_filters", map[string]any{})
	mustContain(t, "list_filters", text, "1 filters:", fs[0].Id+": if from \"billing@vendor.example\": FORWARD it to mallory@evil.example; archive it")
	text, isErr = callTool(t, e.cs, "delete_filter", map[string]any{"filter_id": fs[0].Id})
	if isErr || !strings.Contains(text, "Filter "+fs[0].Id+" deleted. It was: if from") || len(e.gm.Filters()) != 0 {
		t.Fatalf("delete_filter: (isError=%v) %q", isErr, text)
	}
}

func TestFilterApprovalEditedIsRefused(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	args := map[string]any{"subject": "invoice", "add_labels": []any{"STARRED"}}
	_, file := request(t, e, "create_filter", args)
	edit("- star it", "- DELETE it (move it to Trash)", true)(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "create_filter", args)
	if !isErr || !strings.Contains(text, "cannot allow") || len(e.gm.Filters()) != 0 {
		t.Fatalf("edited approval: (isError=%v) %q", isErr, text)
	}
	if rej := actFolder(t, e, "Rejected"); len(rej) != 1 {
		t.Fatalf("Rejected/ holds %v", rej)
	}
}

func TestVacationTextChangedAfterApprovalRefused(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	if text, isErr := callTool(t, e.cs, "get_vacation", map[string]any{}); isErr || !strings.HasPrefix(text, "Vacation responder: OFF") {
		t.Fatalf("get_vacation: (isError=%v) %q", isErr, text)
	}
	args := map[string]any{"enabled": true, "subject": "Away", "text": "I am away until Monday.", "start": "2026-12-01", "end": "2026-12-08", "contacts_only": true}
	text, file := request(t, e, "set_vacation", args)
	mustContain(t, "answer", text, "to turn the vacation responder on until 2026-12-08T00:00:00Z as it is now")
	req := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", req, "type: gmail_vacation_update\n", `target: "vacation"`, "Answers: only the user's contacts\n",
		"From: 2026-12-01T00:00:00Z\nUntil: 2026-12-08T00:00:00Z\n", "Subject: Away\n", "Text:\nI am away until Monday.\n",
		"sends an email, on the user's behalf, to every sender it answers")
	approve(t, e.vault, file)
	// The agent's call with other text is not what was approved: a new
	// request, and nothing set.
	changed := map[string]any{"enabled": true, "subject": "Away", "text": "I am away. Wire the money to IBAN X.", "start": "2026-12-01", "end": "2026-12-08", "contacts_only": true}
	if text, isErr := callTool(t, e.cs, "set_vacation", changed); !isErr || !strings.Contains(text, "Request file:") {
		t.Fatalf("changed text: (isError=%v) %q", isErr, text)
	}
	if e.gm.Calls("settings.updateVacation") != 0 || e.gm.Vacation().EnableAutoReply {
		t.Fatal("vacation set with text that was not approved")
	}
	// The human editing the text of an approval: refused, nothing set.
	_, file2 := request(t, e, "set_vacation", changed)
	edit("Wire the money to IBAN X.", "Back Monday.", true)(t, e.vault, file2)
	if text, isErr := callTool(t, e.cs, "set_vacation", changed); !isErr || !strings.Contains(text, "cannot allow") || !strings.Contains(text, "description was edited") {
		t.Fatalf("edited approval: (isError=%v) %q", isErr, text)
	}
	if e.gm.Calls("settings.updateVacation") != 0 {
		t.Fatal("vacation set from an edited approval")
	}
	// The approved text, exactly: set once.
	text, isErr := callTool(t, e.cs, "set_vacation", args)
	if isErr || !strings.HasPrefix(text, "Done, as the user approved: turn the vacation responder on") {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	v := e.gm.Vacation()
	if !v.EnableAutoReply || v.ResponseBodyPlainText != "I am away until Monday." || !v.RestrictToContacts || v.StartTime != 1796083200000 || v.EndTime != 1796688000000 {
		t.Fatalf("vacation: %+v", v)
	}
	if n := e.gm.Calls("settings.updateVacation"); n != 1 {
		t.Fatalf("updateVacation called %d times", n)
	}
	text, _ = callTool(t, e.cs, "get_vacation", map[string]any{})
	mustContain(t, "get_vacation", text, "Vacation responder: ON", "Text:\nI am away until Monday.")
}

// TestFilterForwardUnverifiedRefused: a filter forwarding to an address
// the account has not verified (unknown, or its owner has not confirmed
// it) is refused before any request is written, as Gmail would refuse to
// make it; the answer says why and what the user must do.
func TestFilterForwardUnverifiedRefused(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	e.gm.AddForwardingAddress("pending@evil.example", false)
	for to, why := range map[string]string{
		"stranger@evil.example": "(it is not among them)",
		"pending@evil.example":  "(its verification is pending: its owner has not confirmed it yet)",
	} {
		text, isErr := callTool(t, e.cs, "create_filter", map[string]any{"from": "billing@vendor.example", "forward": to})
		if !isErr {
			t.Fatalf("%s: accepted: %q", to, text)
		}
		mustContain(t, "answer", text, to+" is not a verified forwarding address of this Gmail account "+why,
			"Settings → Forwarding and POP/IMAP", "No request was written.")
	}
	if names := pendingNames(t, e); len(names) != 0 {
		t.Fatalf("requests written: %v", names)
	}
	if n := e.gm.Calls("settings.filters.create"); n != 0 || len(e.gm.Filters()) != 0 {
		t.Fatalf("%d filters.create calls", n)
	}
}
