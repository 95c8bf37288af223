package localgmail

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/gmail/v1"
)

func labelsOf(t *testing.T, s *Server, id string) string {
	t.Helper()
	l, ok := s.Labels(id)
	if !ok {
		t.Fatalf("message %s gone", id)
	}
	return strings.Join(l, ",")
}

func TestModifyMessageAndThread(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	work, err := svc.Users.Labels.Create("me", &gmail.Label{Name: "Work"}).Do()
	if err != nil {
		t.Fatal(err)
	}
	a := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "Plans", "one", "Message-ID: <p1@example.com>", dateHdr(fixedNow.Add(-2*time.Hour))), "INBOX", "UNREAD")
	b := mustInsert(t, s, msg("b@example.com", "me@sandbox.local", "Re: Plans", "two", "In-Reply-To: <p1@example.com>", dateHdr(fixedNow.Add(-time.Hour))), "INBOX", "UNREAD")
	if a.ThreadId != b.ThreadId {
		t.Fatal("not threaded")
	}
	before := a.HistoryId
	m, err := svc.Users.Messages.Modify("me", a.Id, &gmail.ModifyMessageRequest{AddLabelIds: []string{work.Id, "STARRED"}, RemoveLabelIds: []string{"UNREAD"}}).Do()
	if err != nil || m.Id != a.Id || m.ThreadId != a.ThreadId {
		t.Fatalf("modify: %v %+v", err, m)
	}
	if got := labelsOf(t, s, a.Id); got != "INBOX,Label_1,STARRED" {
		t.Errorf("after modify: %s", got)
	}
	if full, _ := s.Message(a.Id); full.HistoryId <= before {
		t.Errorf("historyId not bumped: %d -> %d", before, full.HistoryId)
	}
	if r, _ := svc.Users.Messages.List("me").Q("label:work is:starred").Do(); len(r.Messages) != 1 {
		t.Errorf("search after modify: %+v", r)
	}

	th, err := svc.Users.Threads.Modify("me", a.ThreadId, &gmail.ModifyThreadRequest{RemoveLabelIds: []string{"INBOX"}}).Do()
	if err != nil || th.Id != a.ThreadId || len(th.Messages) != 2 {
		t.Fatalf("threads.modify: %v %+v", err, th)
	}
	for _, tm := range th.Messages {
		if slices.Contains(tm.LabelIds, "INBOX") {
			t.Errorf("archived thread message keeps INBOX: %v", tm.LabelIds)
		}
	}
	if r, _ := svc.Users.Messages.List("me").Q("in:inbox").Do(); r.ResultSizeEstimate != 0 {
		t.Errorf("inbox after archive: %d", r.ResultSizeEstimate)
	}

	for _, c := range []struct {
		name         string
		err          error
		code         int
		reason, text string
	}{
		{"unknown label", modifyErr(svc, a.Id, []string{"Label_99"}, nil), 400, "invalidArgument", "Invalid label: Label_99"},
		{"SENT", modifyErr(svc, a.Id, []string{"SENT"}, nil), 400, "invalidArgument", "Invalid label: SENT"},
		{"DRAFT", modifyErr(svc, a.Id, nil, []string{"DRAFT"}), 400, "invalidArgument", "Invalid label: DRAFT"},
		{"nothing", modifyErr(svc, a.Id, nil, nil), 400, "invalidArgument", "No label add or removes specified"},
		{"bad id", modifyErr(svc, "zz", []string{"STARRED"}, nil), 400, "invalidArgument", "Invalid id value"},
		{"unknown id", modifyErr(svc, "00000000000000ff", []string{"STARRED"}, nil), 404, "notFound", ""},
		{"thread unknown", func() error {
			_, err := svc.Users.Threads.Modify("me", "00000000000000ff", &gmail.ModifyThreadRequest{AddLabelIds: []string{"STARRED"}}).Do()
			return err
		}(), 404, "notFound", ""},
		{"thread bad label", func() error {
			_, err := svc.Users.Threads.Modify("me", a.ThreadId, &gmail.ModifyThreadRequest{AddLabelIds: []string{"NOPE"}}).Do()
			return err
		}(), 400, "invalidArgument", "Invalid label: NOPE"},
	} {
		t.Run(c.name, func(t *testing.T) { wantAPIError(t, c.err, c.code, c.reason, c.text) })
	}
	if got := labelsOf(t, s, b.Id); got != "UNREAD" {
		t.Errorf("a failed threads.modify changed labels: %s", got)
	}
}

func modifyErr(svc *gmail.Service, id string, add, remove []string) error {
	_, err := svc.Users.Messages.Modify("me", id, &gmail.ModifyMessageRequest{AddLabelIds: add, RemoveLabelIds: remove}).Do()
	return err
}

func TestBatchModify(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	var ids []string
	for i := range 1001 {
		ids = append(ids, mustInsert(t, s, msg("bulk@example.com", "me@sandbox.local", fmt.Sprintf("bulk %d", i), "x"), "INBOX", "UNREAD").Id)
	}
	s.ResetCounters()
	if err := svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{Ids: ids[:1000], RemoveLabelIds: []string{"UNREAD", "INBOX"}}).Do(); err != nil {
		t.Fatal(err)
	}
	if r, _ := svc.Users.Messages.List("me").Q("is:unread").Do(); r.ResultSizeEstimate != 1 {
		t.Errorf("unread after batchModify: %d, want 1", r.ResultSizeEstimate)
	}
	if s.Calls("messages.batchModify") != 1 || s.QuotaUnits() != 50+5 {
		t.Errorf("accounting: %d calls, %d units", s.Calls("messages.batchModify"), s.QuotaUnits())
	}
	err := svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{Ids: ids, AddLabelIds: []string{"STARRED"}}).Do()
	wantAPIError(t, err, 400, "invalidArgument", "Too many ids specified: 1001, limit is 1000")
	err = svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{AddLabelIds: []string{"STARRED"}}).Do()
	wantAPIError(t, err, 400, "invalidArgument", "No message ids specified")
	err = svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{Ids: []string{ids[0], "nope"}, AddLabelIds: []string{"STARRED"}}).Do()
	wantAPIError(t, err, 400, "invalidArgument", "Invalid id value")
	if got := labelsOf(t, s, ids[0]); got != "" {
		t.Errorf("a refused batch changed labels: %q", got)
	}
	// an id deleted meanwhile does not fail the batch
	if err := svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{Ids: []string{ids[0], "00000000000000ff"}, AddLabelIds: []string{"STARRED"}}).Do(); err != nil {
		t.Fatal(err)
	}
	if got := labelsOf(t, s, ids[0]); got != "STARRED" {
		t.Errorf("labels = %q", got)
	}
}

func TestTrashUntrash(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	a := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "Trip", "one", "Message-ID: <t1@example.com>", dateHdr(fixedNow.Add(-2*time.Hour))), "INBOX", "UNREAD")
	b := mustInsert(t, s, msg("me@sandbox.local", "a@example.com", "Re: Trip", "two", "In-Reply-To: <t1@example.com>", dateHdr(fixedNow.Add(-time.Hour))), "SENT")
	m, err := svc.Users.Messages.Trash("me", a.Id).Do()
	if err != nil || strings.Join(m.LabelIds, ",") != "UNREAD,TRASH" {
		t.Fatalf("trash: %v %+v", err, m)
	}
	if r, _ := svc.Users.Messages.List("me").Q("trip").Do(); r.ResultSizeEstimate != 1 {
		t.Errorf("trashed message still found by default: %d", r.ResultSizeEstimate)
	}
	if r, _ := svc.Users.Messages.List("me").Q("in:trash").Do(); r.ResultSizeEstimate != 1 {
		t.Errorf("in:trash: %d", r.ResultSizeEstimate)
	}
	if m, err = svc.Users.Messages.Untrash("me", a.Id).Do(); err != nil || labelsOf(t, s, a.Id) != "INBOX,UNREAD" {
		t.Fatalf("untrash: %v %s", err, labelsOf(t, s, a.Id))
	}
	th, err := svc.Users.Threads.Trash("me", a.ThreadId).Do()
	if err != nil || len(th.Messages) != 2 || labelsOf(t, s, b.Id) != "SENT,TRASH" || labelsOf(t, s, a.Id) != "TRASH,UNREAD" {
		t.Fatalf("threads.trash: %v %+v", err, th)
	}
	if _, err = svc.Users.Threads.Untrash("me", a.ThreadId).Do(); err != nil || labelsOf(t, s, b.Id) != "SENT" || labelsOf(t, s, a.Id) != "INBOX,UNREAD" {
		t.Fatalf("threads.untrash: %v %s %s", err, labelsOf(t, s, a.Id), labelsOf(t, s, b.Id))
	}
	_, err = svc.Users.Messages.Trash("me", "00000000000000ff").Do()
	wantAPIError(t, err, 404, "notFound", "")
	_, err = svc.Users.Threads.Untrash("me", "x").Do()
	wantAPIError(t, err, 400, "invalidArgument", "Invalid id value")
}

func TestLabelGetAndSendAs(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{Email: "owner@example.com", Aliases: []string{"alias@example.org"}})
	mustInsert(t, s, msg("a@example.com", "owner@example.com", "one", "x", "Message-ID: <o1@example.com>"), "INBOX", "UNREAD", "Receipts")
	mustInsert(t, s, msg("a@example.com", "owner@example.com", "Re: one", "x", "In-Reply-To: <o1@example.com>"), "INBOX", "Receipts")
	mustInsert(t, s, msg("a@example.com", "owner@example.com", "two", "x"), "INBOX")
	id, _ := s.LabelID("receipts")
	l, err := svc.Users.Labels.Get("me", id).Do()
	if err != nil || l.Name != "Receipts" || l.Type != "user" || l.MessagesTotal != 2 || l.MessagesUnread != 1 || l.ThreadsTotal != 1 || l.ThreadsUnread != 1 {
		t.Fatalf("labels.get: %v %+v", err, l)
	}
	if l, err = svc.Users.Labels.Get("me", "INBOX").Do(); err != nil || l.MessagesTotal != 3 || l.ThreadsTotal != 2 {
		t.Fatalf("labels.get INBOX: %v %+v", err, l)
	}
	_, err = svc.Users.Labels.Get("me", "Label_42").Do()
	wantAPIError(t, err, 404, "notFound", "")

	sa, err := svc.Users.Settings.SendAs.List("me").Do()
	if err != nil || len(sa.SendAs) != 2 || sa.SendAs[0].SendAsEmail != "owner@example.com" || !sa.SendAs[0].IsPrimary ||
		sa.SendAs[1].SendAsEmail != "alias@example.org" || sa.SendAs[1].VerificationStatus != "accepted" {
		t.Fatalf("sendAs: %v %+v", err, sa)
	}
	// an alias is kept as From; a foreign address becomes the owner's
	for from, want := range map[string]string{
		"Me <alias@example.org>":   "Me <alias@example.org>",
		"Me <someone@example.net>": `"Me" <owner@example.com>`,
	} {
		m, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(msg(from, "bob@example.org", "hi", "x"))}).Do()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := s.RawMessage(m.Id)
		if hb, _ := splitMessage(raw); hb.get("From") != want {
			t.Errorf("From %q sent as %q, want %q", from, hb.get("From"), want)
		}
	}
}

func TestCcBccDelivery(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	raw := msg("me@sandbox.local", "Bob <bob@example.org>, carol@example.org", "Team", "hello",
		"Cc: Dan <dan@example.org>", "Bcc: eve@example.org, me@sandbox.local")
	m, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(raw)}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.LabelIds, ",") != "SENT,INBOX" {
		t.Errorf("bcc to self: labels %v", m.LabelIds)
	}
	own, _ := s.RawMessage(m.Id)
	if hb, _ := splitMessage(own); hb.get("Bcc") != "eve@example.org, me@sandbox.local" || hb.get("Cc") != "Dan <dan@example.org>" {
		t.Errorf("sender's copy must keep Cc and Bcc: %s", own)
	}
	d, ok := s.Delivered(m.Id)
	if !ok || strings.Join(d.Recipients, ",") != "bob@example.org,carol@example.org,dan@example.org,eve@example.org,me@sandbox.local" {
		t.Fatalf("delivery: %v %+v", ok, d.Recipients)
	}
	if hb, _ := splitMessage(d.Raw); hb.has("Bcc") || hb.get("Cc") != "Dan <dan@example.org>" {
		t.Errorf("delivered copy shows Bcc or lost Cc: %s", d.Raw)
	}
	for q, want := range map[string]int64{"bcc:eve@example.org": 1, "cc:dan": 1, "to:carol@example.org": 1, "cc:eve@example.org": 0} {
		if r, _ := svc.Users.Messages.List("me").Q(q).Do(); r.ResultSizeEstimate != want {
			t.Errorf("%s: %d, want %d", q, r.ResultSizeEstimate, want)
		}
	}
	if _, ok := s.Delivered(mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y")).Id); ok {
		t.Error("Delivered of a received message")
	}
	// Bcc alone is enough recipients
	if _, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(msg("", "", "blind", "x", "Bcc: eve@example.org"))}).Do(); err != nil {
		t.Errorf("bcc-only send: %v", err)
	}
}

func TestDraftsListUpdateSend(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	var ids []string
	for i := range 5 {
		d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("", "bob@example.org", fmt.Sprintf("draft %d", i), "body"))}}).Do()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.Id)
		s.o.Now = func() time.Time { return fixedNow.Add(time.Duration(i+1) * time.Minute) }
	}
	seeded := mustInsert(t, s, msg("me@sandbox.local", "x@example.org", "seeded draft", "x", dateHdr(fixedNow.Add(-time.Hour))), "DRAFT")
	mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "draft 9 lookalike", "x"), "INBOX")

	var got []string
	tok := ""
	for {
		r, err := svc.Users.Drafts.List("me").MaxResults(4).PageToken(tok).Do()
		if err != nil {
			t.Fatal(err)
		}
		if r.ResultSizeEstimate != 6 {
			t.Errorf("estimate %d", r.ResultSizeEstimate)
		}
		for _, d := range r.Drafts {
			if d.Message == nil || d.Message.Id == "" || d.Message.LabelIds != nil {
				t.Errorf("drafts.list item: %+v", d)
			}
			got = append(got, d.Id)
		}
		if tok = r.NextPageToken; tok == "" {
			break
		}
		_, err = svc.Users.Messages.List("me").PageToken(tok).Do()
		wantAPIError(t, err, 400, "invalidArgument", "Invalid pageToken")
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if len(got) != 6 || strings.Join(got[:5], ",") != strings.Join(want, ",") {
		t.Errorf("drafts newest first: %v want %v + seeded", got, want)
	}
	if r, err := svc.Users.Drafts.List("me").Q(`subject:"draft 3"`).Do(); err != nil || len(r.Drafts) != 1 || r.Drafts[0].Id != ids[3] {
		t.Errorf("drafts.list q: %v %+v", err, r)
	}
	if r, _ := svc.Users.Drafts.List("me").Q("seeded").Do(); len(r.Drafts) != 1 || r.Drafts[0].Message.Id != seeded.Id {
		t.Errorf("a DRAFT-labelled Insert is a draft: %+v", r)
	}

	old, _ := s.Draft(ids[0])
	up, err := svc.Users.Drafts.Update("me", ids[0], &gmail.Draft{Id: ids[0], Message: &gmail.Message{Raw: b64(msg("", "carol@example.org", "draft 0 v2", "new body", "Cc: dan@example.org"))}}).Do()
	if err != nil || up.Id != ids[0] || up.Message.Id == old.Message.Id || strings.Join(up.Message.LabelIds, ",") != "DRAFT" {
		t.Fatalf("update: %v %+v", err, up)
	}
	if _, ok := s.Message(old.Message.Id); ok {
		t.Error("the draft's old message is still stored")
	}
	g, err := svc.Users.Drafts.Get("me", ids[0]).Format("full").Do()
	if err != nil || header(g.Message.Payload, "Subject") != "draft 0 v2" || header(g.Message.Payload, "Cc") != "dan@example.org" {
		t.Fatalf("get after update: %v %+v", err, g)
	}
	sent, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: ids[0]}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Delivered(sent.Id); strings.Join(d.Recipients, ",") != "carol@example.org,dan@example.org" {
		t.Errorf("sent draft recipients: %v", d.Recipients)
	}
	for _, c := range []struct {
		err          error
		code         int
		reason, text string
	}{
		{func() error {
			_, e := svc.Users.Drafts.Update("me", ids[0], &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("", "a@b.c", "x", "y"))}}).Do()
			return e
		}(), 404, "notFound", ""},
		{func() error {
			_, e := svc.Users.Drafts.Update("me", "bogus", &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("", "a@b.c", "x", "y"))}}).Do()
			return e
		}(), 400, "invalidArgument", "Invalid id value"},
		{func() error { _, e := svc.Users.Drafts.Update("me", ids[1], &gmail.Draft{}).Do(); return e }(), 400, "invalidArgument", "Missing draft message"},
	} {
		wantAPIError(t, c.err, c.code, c.reason, c.text)
	}
}

func TestOrganiseNeedsModifyScope(t *testing.T) {
	t.Parallel()
	s, base := authServer(t)
	svc := tokenService(t, base, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: s.IssueAccessToken("cid", "gmail.readonly", "gmail.compose")}))
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"), "INBOX")
	for name, err := range map[string]error{
		"modify":      modifyErr(svc, m.Id, []string{"STARRED"}, nil),
		"batchModify": svc.Users.Messages.BatchModify("me", &gmail.BatchModifyMessagesRequest{Ids: []string{m.Id}, AddLabelIds: []string{"STARRED"}}).Do(),
		"trash":       func() error { _, e := svc.Users.Messages.Trash("me", m.Id).Do(); return e }(),
		"threads":     func() error { _, e := svc.Users.Threads.Trash("me", m.ThreadId).Do(); return e }(),
	} {
		t.Run(name, func(t *testing.T) { wantAPIError(t, err, 403, "insufficientPermissions", "") })
	}
	for name, err := range map[string]error{
		"drafts.list": func() error { _, e := svc.Users.Drafts.List("me").Do(); return e }(),
		"labels.get":  func() error { _, e := svc.Users.Labels.Get("me", "INBOX").Do(); return e }(),
		"sendAs":      func() error { _, e := svc.Users.Settings.SendAs.List("me").Do(); return e }(),
	} {
		if err != nil {
			t.Errorf("%s with readonly+compose: %v", name, err)
		}
	}
}
