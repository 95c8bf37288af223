package gmail

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestEveryMethodAnswersGmailShapes drives Client's methods, one after the
// other on one mailbox, against the local server behind gmailschema's
// Recorder (newEnv puts it there for every test of this package): each
// request is answered, and each answer holds to Google's discovery
// document. That every Gmail method the server implements is made by some
// test of the package, TestMain checks after the run (main_test.go): a new
// Client method needs a test, here or in its own file, not a line in a
// list.
func TestEveryMethodAnswersGmailShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{ScopeReadonly, ScopeCompose, ScopeModify, ScopeLabels, ScopeInsert, ScopeSettingsBasic})
	e.srv.AddForwardingAddress("y@example.org", true) // CreateFilter's forward target, verified as Gmail requires
	ctx := context.Background()
	c := e.c
	files := "--mix\r\nContent-Type: text/plain\r\n\r\nsee the files\r\n" +
		"--mix\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename=big.csv\r\n\r\n" + strings.Repeat("a,b\r\n", 100) +
		"--mix\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=small.txt\r\n\r\nsmall\r\n--mix--\r\n"
	id, tid := e.insert(t, "Alice <alice@example.org>", "files", files, "Message-ID: <files@example.org>",
		"MIME-Version: 1.0", "Content-Type: multipart/mixed; boundary=mix")
	reply := []byte("To: alice@example.org\r\nSubject: Re: files\r\nIn-Reply-To: <files@example.org>\r\nReferences: <files@example.org>\r\n\r\nthanks\r\n")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var draftID string
	var label, label2, filterID string
	calls := map[string]func(){
		"HTTPClient": func() { _ = c.HTTPClient() },
		"Endpoint":   func() { _ = c.Endpoint() },
		"GetProfile": func() { _, err := c.GetProfile(ctx); must("GetProfile", err) },
		"Profile":    func() { _, err := c.Profile(ctx); must("Profile", err) },
		"SendAsAliases": func() {
			_, err := c.SendAsAliases(ctx)
			must("SendAsAliases", err)
		},
		"OwnAddresses":     func() { _, err := c.OwnAddresses(ctx); must("OwnAddresses", err) },
		"Search":           func() { _, err := c.Search(ctx, "files", 10); must("Search", err) },
		"SearchPage":       func() { _, err := c.SearchPage(ctx, "", 1, ""); must("SearchPage", err) },
		"Message":          func() { _, err := c.Message(ctx, id); must("Message", err) },
		"Thread":           func() { _, err := c.Thread(ctx, tid); must("Thread", err) },
		"SearchThreads":    func() { _, err := c.SearchThreads(ctx, "files", 10, ""); must("SearchThreads", err) },
		"ThreadMessageIDs": func() { _, err := c.ThreadMessageIDs(ctx, tid); must("ThreadMessageIDs", err) },
		"Messages":         func() { _, err := c.Messages(ctx, []string{id}); must("Messages", err) },
		"ReplyParent":      func() { _, err := c.ReplyParent(ctx, tid, ""); must("ReplyParent", err) },
		"GetAttachment": func() {
			m, err := c.Message(ctx, id)
			must("Message", err)
			for _, f := range m.Files {
				if f.ID != "" {
					_, err := c.GetAttachment(ctx, id, f.ID)
					must("GetAttachment", err)
				}
			}
		},
		"CreateDraft": func() {
			var err error
			draftID, err = c.CreateDraft(ctx, reply, tid)
			must("CreateDraft", err)
		},
		"ListDrafts":  func() { _, err := c.ListDrafts(ctx, "", 10, ""); must("ListDrafts", err) },
		"GetDraft":    func() { _, err := c.GetDraft(ctx, draftID); must("GetDraft", err) },
		"DraftRaw":    func() { _, _, err := c.DraftRaw(ctx, draftID); must("DraftRaw", err) },
		"UpdateDraft": func() { _, err := c.UpdateDraft(ctx, draftID, reply, tid); must("UpdateDraft", err) },
		"SendDraft":   func() { _, err := c.SendDraft(ctx, draftID, reply, tid); must("SendDraft", err) },
		"Send":        func() { _, err := c.Send(ctx, reply, tid); must("Send", err) },
		"DeleteDraft": func() {
			d, err := c.CreateDraft(ctx, reply, tid)
			must("CreateDraft", err)
			must("DeleteDraft", c.DeleteDraft(ctx, d))
		},
		"HasSentTo": func() { _, err := c.HasSentTo(ctx, "alice@example.org"); must("HasSentTo", err) },
		"Insert": func() {
			_, err := c.Insert(ctx, []byte("From: a@example.org\r\nSubject: copy\r\nMessage-ID: <copy@example.org>\r\n\r\nx"), "", []string{"INBOX"})
			must("Insert", err)
		},
		"FindRFC822": func() { _, _, err := c.FindRFC822(ctx, "<copy@example.org>"); must("FindRFC822", err) },
		"CreateLabel": func() {
			var err error
			label, err = c.CreateLabel(ctx, "Agents/Mail")
			must("CreateLabel", err)
		},
		"ListLabels": func() { _, err := c.ListLabels(ctx); must("ListLabels", err) },
		"LabelID":    func() { _, err := c.LabelID(ctx, "Agents/Mail"); must("LabelID", err) },
		"ModifyMessages": func() {
			_, err := c.ModifyMessages(ctx, []string{id}, LabelChange{Add: []string{label}})
			must("ModifyMessages", err)
		},
		"ModifyThread": func() {
			_, err := c.ModifyThread(ctx, tid, LabelChange{Add: []string{"STARRED"}})
			must("ModifyThread", err)
		},
		"TrashMessage":   func() { _, err := c.TrashMessage(ctx, id); must("TrashMessage", err) },
		"UntrashMessage": func() { _, err := c.UntrashMessage(ctx, id); must("UntrashMessage", err) },
		"TrashThread":    func() { _, err := c.TrashThread(ctx, tid); must("TrashThread", err) },
		"UntrashThread":  func() { _, err := c.UntrashThread(ctx, tid); must("UntrashThread", err) },
		// Issue 27 (settings.go).
		"NewLabel": func() {
			l, err := c.NewLabel(ctx, LabelSpec{Name: "Tinted", LabelListVisibility: "labelShowIfUnread", MessageListVisibility: "hide", TextColor: "#ffffff", BgColor: "#16a766"})
			must("NewLabel", err)
			label2 = l.ID
		},
		"GetLabel": func() { _, err := c.GetLabel(ctx, label2); must("GetLabel", err) },
		"PatchLabel": func() {
			_, err := c.PatchLabel(ctx, label2, LabelSpec{Name: "Tinted2"})
			must("PatchLabel", err)
		},
		"ListFilters": func() { _, err := c.ListFilters(ctx); must("ListFilters", err) },
		"ForwardingAddresses": func() {
			fs, err := c.ForwardingAddresses(ctx)
			must("ForwardingAddresses", err)
			if len(fs) != 1 || fs[0] != (ForwardingAddress{Email: "y@example.org", Status: "accepted", Accepted: true}) {
				t.Fatalf("ForwardingAddresses = %+v", fs)
			}
		},
		"CreateFilter": func() {
			f, err := c.CreateFilter(ctx, Filter{Criteria: FilterCriteria{From: "x@example.org", Size: 1000, SizeComparison: "larger"},
				Action: FilterAction{AddLabelIDs: []string{label2}, RemoveLabelIDs: []string{"INBOX"}, Forward: "y@example.org"}})
			must("CreateFilter", err)
			filterID = f.ID
		},
		"DeleteFilter": func() { must("DeleteFilter", c.DeleteFilter(ctx, filterID)) },
		"DeleteLabel":  func() { must("DeleteLabel", c.DeleteLabel(ctx, label2)) },
		"GetVacation":  func() { _, err := c.GetVacation(ctx); must("GetVacation", err) },
		"ListUnsubscribe": func() {
			lid, _ := e.insert(t, "News <news@list.example>", "weekly", "hello\r\n",
				"List-Unsubscribe: <mailto:u@list.example>, <https://list.example/u>", "List-Unsubscribe-Post: List-Unsubscribe=One-Click")
			lh, err := c.ListUnsubscribe(ctx, lid)
			must("ListUnsubscribe", err)
			if lh.ListUnsubscribePost != "List-Unsubscribe=One-Click" || !strings.Contains(lh.ListUnsubscribe, "<https://list.example/u>") {
				t.Errorf("ListUnsubscribe: %+v", lh)
			}
		},
		"UpdateVacation": func() {
			_, err := c.UpdateVacation(ctx, Vacation{Enabled: true, Subject: "Away", Text: "back soon", RestrictToContacts: true,
				Start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)})
			must("UpdateVacation", err)
		},
	}
	// In an order where each finds what it needs.
	for _, name := range []string{"HTTPClient", "Endpoint", "GetProfile", "Profile", "SendAsAliases", "OwnAddresses",
		"Search", "SearchPage", "Message", "Thread", "SearchThreads", "ThreadMessageIDs", "Messages", "ReplyParent", "GetAttachment",
		"CreateDraft", "ListDrafts", "GetDraft", "DraftRaw", "UpdateDraft", "SendDraft", "Send", "DeleteDraft", "HasSentTo",
		"Insert", "FindRFC822", "CreateLabel", "ListLabels", "LabelID",
		"ModifyMessages", "ModifyThread", "TrashMessage", "UntrashMessage", "TrashThread", "UntrashThread",
		"NewLabel", "GetLabel", "PatchLabel", "ListFilters", "ForwardingAddresses", "CreateFilter", "DeleteFilter", "DeleteLabel",
		"UpdateVacation", "GetVacation", "ListUnsubscribe"} {
		calls[name]()
		delete(calls, name)
	}
	if len(calls) > 0 {
		t.Fatalf("not called: %v", calls)
	}
	// The Recorder's verdict on all of it comes when the test ends.
}
