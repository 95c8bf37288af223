package localgmail

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

func TestSendValidation(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	send := func(raw, threadID string) (*gmail.Message, error) {
		return svc.Users.Messages.Send("me", &gmail.Message{Raw: raw, ThreadId: threadID}).Do()
	}
	good := msg("Someone Else <other@example.com>", "Bob <bob@example.org>", "Hello", "hi bob")
	cases := []struct {
		name, raw, thread string
		code              int
		message           string
	}{
		{"unpadded base64url", b64(good), "", 200, ""},
		{"padded base64url", base64.URLEncoding.EncodeToString(good), "", 200, ""},
		{"standard base64", "ab+/cd==", "", 400, "Invalid value for ByteString: ab+/cd=="},
		{"empty raw", "", "", 400, "'raw' RFC822 payload message string or uploading message via /upload/* URL required"},
		{"no recipient", b64(msg("", "", "x", "y")), "", 400, "Recipient address required"},
		{"invalid To", b64(msg("", "not an address", "x", "y")), "", 400, "Invalid To header"},
		{"invalid Cc", b64(msg("", "bob@example.org", "x", "y", "Cc: @@")), "", 400, "Invalid Cc header"},
		{"Bcc only", b64(msg("", "", "x", "y", "Bcc: carol@example.org")), "", 200, ""},
		{"malformed threadId", b64(good), "zzz", 400, "Invalid thread_id value"},
		{"unknown threadId", b64(good), "00000000000000ff", 400, "Invalid thread_id value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := send(c.raw, c.thread)
			if c.code == 200 {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(m.LabelIds, ",") != "SENT" || m.Id != m.ThreadId || !hexID().MatchString(m.Id) {
					t.Errorf("sent: %+v", m)
				}
				return
			}
			wantAPIError(t, err, c.code, "invalidArgument", c.message)
		})
	}
	sent := s.Sent()
	if len(sent) != 3 {
		t.Fatalf("Sent() has %d messages, want 3", len(sent))
	}
	raw, _ := DecodeRaw(sent[0].Raw)
	stored, _ := s.RawMessage(sent[0].Id)
	if !bytes.Equal(raw, stored) {
		t.Error("Sent().Raw differs from RawMessage")
	}
	hb, _ := splitMessage(raw)
	// Gmail sends as the account: From is rewritten, Date and Message-ID added.
	if hb.get("From") != `"Someone Else" <me@sandbox.local>` || hb.get("Date") == "" || !strings.HasSuffix(hb.get("Message-ID"), "@mail.gmail.com>") {
		t.Errorf("outgoing headers: From=%q Date=%q Message-ID=%q", hb.get("From"), hb.get("Date"), hb.get("Message-ID"))
	}
	// a message to oneself lands in the inbox as well
	m, err := send(b64(msg("", "me@sandbox.local", "note to self", "x")), "")
	if err != nil || strings.Join(m.LabelIds, ",") != "SENT,INBOX" {
		t.Errorf("self-send: %v %v", m, err)
	}
}

func TestSendThreading(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	parent := mustInsert(t, s, msg("alice@example.com", "me@sandbox.local", "Budget", "numbers", "Message-ID: <parent@example.com>"), "INBOX")
	other := mustInsert(t, s, msg("zed@example.com", "me@sandbox.local", "Budget", "same subject, other thread", "Message-ID: <other@example.com>"), "INBOX")
	reply := func(subject string, hdrs ...string) []byte {
		return msg("me@sandbox.local", "alice@example.com", subject, "reply", hdrs...)
	}
	irt, refs := "In-Reply-To: <parent@example.com>", "References: <parent@example.com>"
	cases := []struct {
		name   string
		raw    []byte
		thread string
		joins  bool
	}{
		{"threadId + headers + Re: subject", reply("Re: Budget", irt, refs), parent.Id, true},
		{"Fwd: and case differences", reply("FWD: re: budget", irt, refs), parent.Id, true},
		{"References only", reply("Re: Budget", refs), parent.Id, true},
		{"no threadId", reply("Re: Budget", irt, refs), "", false},
		{"no headers", reply("Re: Budget"), parent.Id, false},
		{"different subject", reply("Re: Budget v2", irt, refs), parent.Id, false},
		{"Gmail id instead of Message-ID", reply("Re: Budget", "In-Reply-To: <"+parent.Id+">"), parent.Id, false},
		{"headers point into another thread", reply("Re: Budget", irt, refs), other.Id, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, viaDraft := range []bool{false, true} {
				var got *gmail.Message
				var err error
				if viaDraft {
					var d *gmail.Draft
					d, err = svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(c.raw), ThreadId: c.thread}}).Do()
					if err == nil {
						got = d.Message
					}
				} else {
					got, err = svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(c.raw), ThreadId: c.thread}).Do()
				}
				if err != nil {
					t.Fatal(err)
				}
				if joined := got.ThreadId == parent.Id; joined != c.joins {
					t.Errorf("draft=%v: threadId=%s joined=%v, want %v", viaDraft, got.ThreadId, joined, c.joins)
				}
				if !c.joins && got.ThreadId != got.Id {
					t.Errorf("draft=%v: a new thread's id must be its first message's id", viaDraft)
				}
			}
		})
	}
	th, err := svc.Users.Threads.Get("me", parent.Id).Format("minimal").Do()
	if err != nil || len(th.Messages) != 7 || th.Messages[0].Id != parent.Id {
		t.Errorf("thread: %v, %d messages", err, len(th.Messages))
	}
}

func TestMessageIDRewrite(t *testing.T) {
	t.Parallel()
	for _, rewrite := range []bool{false, true} {
		s, svc := newService(t, Options{RewriteMessageID: rewrite})
		raw := msg("", "bob@example.org", "tracked", "body tok-8f3a", "Message-ID: <run-1@example.com>")
		m, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(raw)}).Do()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := svc.Users.Messages.Get("me", m.Id).Format("metadata").MetadataHeaders("Message-ID").Do()
		id := header(got.Payload, "Message-ID")
		byID, _ := svc.Users.Messages.List("me").Q("rfc822msgid:<run-1@example.com>").Do()
		byToken, _ := svc.Users.Messages.List("me").Q(`in:sent "tok-8f3a"`).Do()
		if rewrite {
			if !regexp.MustCompile(`^<CA[A-Za-z0-9]+@mail\.gmail\.com>$`).MatchString(id) || len(byID.Messages) != 0 {
				t.Errorf("rewrite: Message-ID %q, rfc822msgid hits %d", id, len(byID.Messages))
			}
		} else if id != "<run-1@example.com>" || len(byID.Messages) != 1 {
			t.Errorf("no rewrite: Message-ID %q, rfc822msgid hits %d", id, len(byID.Messages))
		}
		if len(byToken.Messages) != 1 || s.Calls("messages.send") != 1 {
			t.Errorf("reconcile by token: %d hits", len(byToken.Messages))
		}
	}
}

func TestDrafts(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{RewriteMessageID: true})
	raw := msg("", "bob@example.org", "Draft subject", "draft body", "Message-ID: <draft-1@example.com>")
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(raw)}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	if !draftID().MatchString(d.Id) || strings.Join(d.Message.LabelIds, ",") != "DRAFT" {
		t.Fatalf("draft: %+v %+v", d, d.Message)
	}
	got, err := svc.Users.Drafts.Get("me", d.Id).Format("metadata").Do()
	if err != nil || got.Message.Id != d.Message.Id || header(got.Message.Payload, "Subject") != "Draft subject" {
		t.Fatalf("drafts.get: %v %+v", err, got)
	}
	if l, _ := svc.Users.Messages.List("me").Q("in:drafts").Do(); len(l.Messages) != 1 {
		t.Errorf("in:drafts: %d", len(l.Messages))
	}
	sent, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do()
	if err != nil || strings.Join(sent.LabelIds, ",") != "SENT" {
		t.Fatalf("drafts.send: %v %+v", err, sent)
	}
	_, err = svc.Users.Drafts.Get("me", d.Id).Do()
	wantAPIError(t, err, 404, "notFound", "Requested entity was not found.")
	if all := s.Sent(); len(all) != 1 || all[0].Id != sent.Id {
		t.Errorf("Sent() = %v", all)
	}
	m, _ := svc.Users.Messages.Get("me", sent.Id).Format("metadata").Do()
	if header(m.Payload, "Message-ID") != "<draft-1@example.com>" { // drafts keep their Message-ID
		t.Errorf("drafts.send Message-ID = %q", header(m.Payload, "Message-ID"))
	}

	// a draft without recipients can be saved but not sent, and survives
	d2, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("", "", "no rcpt", "x"))}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Users.Drafts.Send("me", &gmail.Draft{Id: d2.Id}).Do()
	wantAPIError(t, err, 400, "invalidArgument", "Recipient address required")
	if _, ok := s.Draft(d2.Id); !ok {
		t.Error("failed drafts.send deleted the draft")
	}
	// drafts.send may carry updated content
	updated := msg("", "carol@example.org", "now with rcpt", "x")
	if sent, err = svc.Users.Drafts.Send("me", &gmail.Draft{Id: d2.Id, Message: &gmail.Message{Raw: b64(updated)}}).Do(); err != nil {
		t.Fatal(err)
	}
	if raw, _ := s.RawMessage(sent.Id); !strings.Contains(string(raw), "carol@example.org") {
		t.Errorf("updated draft content not sent: %s", raw)
	}

	d3, _ := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(raw)}}).Do()
	if err := svc.Users.Drafts.Delete("me", d3.Id).Do(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Message(d3.Message.Id); ok {
		t.Error("deleted draft's message still stored")
	}
	for _, c := range []struct {
		err          error
		code         int
		reason, text string
	}{
		{svc.Users.Drafts.Delete("me", d3.Id).Do(), 404, "notFound", ""},
		{func() error { _, e := svc.Users.Drafts.Get("me", "bogus").Do(); return e }(), 400, "invalidArgument", "Invalid id value"},
		{func() error { _, e := svc.Users.Drafts.Send("me", &gmail.Draft{Id: "r-1"}).Do(); return e }(), 404, "notFound", ""},
		{func() error { _, e := svc.Users.Drafts.Create("me", &gmail.Draft{}).Do(); return e }(), 400, "invalidArgument", ""},
	} {
		wantAPIError(t, c.err, c.code, c.reason, c.text)
	}
}

// TestDraftSendWithContent: drafts.send given the draft's message acts as
// drafts.update then drafts.send: an edit stored meanwhile is not what is
// sent, a reply's draft naming its thread stays in it, and one naming none
// leaves it (as drafts.update).
func TestDraftSendWithContent(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	parent := mustInsert(t, s, msg("alice@example.com", "me@sandbox.local", "Budget", "numbers", "Message-ID: <parent@example.com>"), "INBOX")
	reply := msg("", "alice@example.com", "Re: Budget", "approved text", "In-Reply-To: <parent@example.com>", "References: <parent@example.com>")
	for _, c := range []struct {
		thread   string
		inThread bool
	}{{parent.ThreadId, true}, {"", false}} {
		d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(reply), ThreadId: parent.ThreadId}}).Do()
		if err != nil || d.Message.ThreadId != parent.ThreadId {
			t.Fatalf("reply draft: %v %+v", err, d)
		}
		edited := msg("", "mallory@example.org", "Re: Budget", "edited text", "References: <parent@example.com>")
		if _, err := svc.Users.Drafts.Update("me", d.Id, &gmail.Draft{Message: &gmail.Message{Raw: b64(edited), ThreadId: parent.ThreadId}}).Do(); err != nil {
			t.Fatal(err)
		}
		sent, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id, Message: &gmail.Message{Raw: b64(reply), ThreadId: c.thread}}).Do()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := s.RawMessage(sent.Id)
		if !strings.Contains(string(raw), "approved text") || strings.Contains(string(raw), "mallory") {
			t.Errorf("thread %q: sent\n%s", c.thread, raw)
		}
		if (sent.ThreadId == parent.ThreadId) != c.inThread {
			t.Errorf("thread %q: sent into thread %s (parent's %s)", c.thread, sent.ThreadId, parent.ThreadId)
		}
		if _, ok := s.Draft(d.Id); ok {
			t.Errorf("thread %q: draft kept after send", c.thread)
		}
	}
}

func TestInsertAndMedia(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	raw := msg("alice@example.com", "me@sandbox.local", "imported", "old mail", dateHdr(date))
	for _, c := range []struct {
		src  string
		want int64
	}{{"", fixedNow.UnixMilli()}, {"receivedTime", fixedNow.UnixMilli()}, {"dateHeader", date.UnixMilli()}} {
		call := svc.Users.Messages.Insert("me", &gmail.Message{Raw: b64(raw), LabelIds: []string{"INBOX", "UNREAD"}})
		if c.src != "" {
			call = call.InternalDateSource(c.src)
		}
		m, err := call.Do()
		if err != nil {
			t.Fatal(err)
		}
		full, _ := s.Message(m.Id)
		if full.InternalDate != c.want || strings.Join(m.LabelIds, ",") != "INBOX,UNREAD" {
			t.Errorf("insert %q: internalDate %d want %d, labels %v", c.src, full.InternalDate, c.want, m.LabelIds)
		}
	}
	_, err := svc.Users.Messages.Insert("me", &gmail.Message{Raw: b64(raw), LabelIds: []string{"NOPE"}}).Do()
	wantAPIError(t, err, 400, "invalidArgument", "Invalid label: NOPE")
	m, err := svc.Users.Messages.Insert("me", &gmail.Message{}).Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822")).Do()
	if err != nil || m.LabelIds != nil {
		t.Fatalf("media insert: %v %+v", err, m)
	}
	if len(s.Sent()) != 0 {
		t.Error("insert must never send")
	}
	out := msg("", "bob@example.org", "via upload", "x")
	if _, err := svc.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(out), googleapi.ContentType("message/rfc822")).Do(); err != nil {
		t.Fatal(err)
	}
	if len(s.Sent()) != 1 || s.Calls("messages.send") != 1 {
		t.Errorf("media send: %d sent", len(s.Sent()))
	}
}

func TestLabelsAndProfile(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{Email: "owner@example.com"})
	l, err := svc.Users.Labels.Create("me", &gmail.Label{Name: "Work/Projects"}).Do()
	if err != nil || l.Id != "Label_1" || l.Type != "user" || l.Name != "Work/Projects" || l.MessageListVisibility != "show" {
		t.Fatalf("create: %v %+v", err, l)
	}
	_, err = svc.Users.Labels.Create("me", &gmail.Label{Name: "work/projects"}).Do()
	wantAPIError(t, err, 409, "duplicate", "Label name exists or conflicts")
	for _, bad := range []string{"INBOX", "Inbox", "Sent", "", "a//b"} {
		_, err = svc.Users.Labels.Create("me", &gmail.Label{Name: bad}).Do()
		wantAPIError(t, err, 400, "invalidArgument", "Invalid label name")
	}
	list, err := svc.Users.Labels.List("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, l := range list.Labels {
		types[l.Id] = l.Type
	}
	for _, id := range []string{"INBOX", "SENT", "DRAFT", "SPAM", "TRASH", "UNREAD", "STARRED", "IMPORTANT", "CHAT", "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS"} {
		if types[id] != "system" {
			t.Errorf("system label %s: type %q", id, types[id])
		}
	}
	for i := 2; i <= 11; i++ {
		if _, err := svc.Users.Labels.Create("me", &gmail.Label{Name: fmt.Sprintf("L%d", i)}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	list, _ = svc.Users.Labels.List("me").Do()
	if n := len(list.Labels); n != 25 || list.Labels[14].Id != "Label_1" || list.Labels[24].Id != "Label_11" {
		t.Errorf("user labels must follow system labels in creation order: %d labels", n)
	}
	if id, ok := s.LabelID("l7"); !ok || id != "Label_7" {
		t.Errorf("LabelID(l7) = %q %v", id, ok)
	}
	if types["Label_1"] != "user" {
		t.Errorf("labels: %v", types)
	}
	mustInsert(t, s, msg("a@example.com", "owner@example.com", "one", "x"), "INBOX")
	mustInsert(t, s, msg("a@example.com", "owner@example.com", "two", "x"), "Work/Projects")
	p, err := svc.Users.GetProfile("me").Do()
	if err != nil || p.EmailAddress != "owner@example.com" || p.MessagesTotal != 2 || p.ThreadsTotal != 2 || p.HistoryId == 0 {
		t.Errorf("profile: %v %+v", err, p)
	}
	if r, _ := svc.Users.Messages.List("me").LabelIds(l.Id).Do(); len(r.Messages) != 1 {
		t.Errorf("list by user label id: %d", len(r.Messages))
	}
}
