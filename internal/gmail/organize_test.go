package gmail

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// labelsOf reads a message's labels from the server, sorted.
func (e *env) labelsOf(t *testing.T, id string) string {
	t.Helper()
	m, ok := e.srv.Message(id)
	if !ok {
		t.Fatalf("message %s gone", id)
	}
	l := slices.Clone(m.LabelIds)
	slices.Sort(l)
	return strings.Join(l, ",")
}

func TestSearchPagesEveryMessageOnce(t *testing.T) {
	e := newEnv(t, nil)
	want := map[string]bool{}
	for i := range 120 {
		id, _ := e.insert(t, "ci@example.org", fmt.Sprintf("build %03d", i), "build finished")
		want[id] = true
	}
	e.insert(t, "someone@example.org", "unrelated", "nothing")
	ctx := context.Background()
	seen := map[string]int{}
	tok, pages := "", 0
	for {
		p, err := e.c.SearchPage(ctx, "build finished", 50, tok)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.ResultSizeEstimate != 120 {
			t.Errorf("page %d: estimate %d", pages, p.ResultSizeEstimate)
		}
		for _, s := range p.Results {
			seen[s.ID]++
			if !strings.HasPrefix(s.Subject, "build ") {
				t.Errorf("result %+v", s)
			}
		}
		if tok = p.NextPageToken; tok == "" {
			break
		}
		if _, err := e.c.SearchPage(ctx, "other query", 50, tok); !errors.Is(err, ErrBadPageToken) {
			t.Errorf("token of another query: %v", err)
		}
	}
	if pages != 3 || len(seen) != 120 {
		t.Fatalf("%d pages, %d distinct results", pages, len(seen))
	}
	for id, n := range seen {
		if n != 1 || !want[id] {
			t.Errorf("message %s seen %d times (matching: %v)", id, n, want[id])
		}
	}
	if _, err := e.c.SearchPage(ctx, "x", 50, "garbage"); !errors.Is(err, ErrBadPageToken) {
		t.Errorf("garbage token: %v", err)
	}
}

// png1x1 is a complete 1×1 PNG.
const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func TestAttachmentsListedAndFetched(t *testing.T) {
	e := newEnv(t, nil)
	body := "--mix\r\nContent-Type: multipart/alternative; boundary=alt\r\n\r\n" +
		"--alt\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\nsee attached\r\n" +
		"--alt\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n<p>see <b>attached</b></p>\r\n--alt--\r\n" +
		"--mix\r\nContent-Type: text/plain; name=\"notes.txt\"\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\n\r\nline one\r\nline two\r\n" +
		"--mix\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"dot.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" + png1x1 + "\r\n" +
		"--mix\r\nContent-Type: image/gif\r\nContent-ID: <logo>\r\nContent-Transfer-Encoding: base64\r\n\r\nR0lGODlhAQABAAAAACw=\r\n" +
		"--mix--\r\n"
	id, _ := e.insert(t, "a@example.org", "files", body, "MIME-Version: 1.0", "Content-Type: multipart/mixed; boundary=mix")
	ctx := context.Background()
	m, err := e.c.Message(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "see attached" || !m.HTML || !slices.Equal(m.Attachments, []string{"notes.txt", "dot.png"}) || len(m.Files) != 3 {
		t.Fatalf("message: text %q html %v attachments %v files %+v", m.Text, m.HTML, m.Attachments, m.Files)
	}
	want := []struct {
		name, mime string
		size       int64
	}{{"notes.txt", "text/plain", 18}, {"dot.png", "image/png", 70}, {"", "image/gif", 14}}
	for i, w := range want {
		f := m.Files[i]
		if f.Filename != w.name || f.MimeType != w.mime || f.Size != w.size || f.ID == "" || f.PartID == "" {
			t.Errorf("file %d = %+v, want %+v", i, f, w)
		}
		data, err := e.c.GetAttachment(ctx, id, f.ID)
		if err != nil || int64(len(data)) != f.Size {
			t.Errorf("GetAttachment %s: %d bytes, %v", w.name, len(data), err)
		}
		if i == 0 && string(data) != "line one\r\nline two" {
			t.Errorf("notes.txt = %q", data)
		}
		if i == 1 && !strings.HasPrefix(string(data), "\x89PNG") {
			t.Errorf("dot.png = %q", data)
		}
	}
	other, _ := e.insert(t, "a@example.org", "other", "x")
	if _, err := e.c.GetAttachment(ctx, other, m.Files[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("attachment id of another message: %v", err)
	}
}

func TestDraftLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	var ids []string
	for i := range 3 {
		id, err := e.c.CreateDraft(ctx, []byte(fmt.Sprintf("To: bob@example.org\r\nCc: carol@example.org\r\nBcc: dan@example.org\r\nSubject: draft %d\r\n\r\nbody %d", i, i)), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var listed []Draft
	tok := ""
	for {
		p, err := e.c.ListDrafts(ctx, "", 2, tok)
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, p.Drafts...)
		if p.ResultSizeEstimate != 3 {
			t.Errorf("estimate %d", p.ResultSizeEstimate)
		}
		if tok = p.NextPageToken; tok == "" {
			break
		}
	}
	if len(listed) != 3 {
		t.Fatalf("listed %d drafts", len(listed))
	}
	for _, d := range listed {
		if !slices.Contains(ids, d.ID) || d.Message == nil || d.Message.Cc != "carol@example.org" || d.Message.Bcc != "dan@example.org" ||
			!strings.HasPrefix(d.Message.Subject, "draft ") || d.Message.Snippet == "" {
			t.Errorf("listed draft %+v %+v", d, d.Message)
		}
	}
	if p, err := e.c.ListDrafts(ctx, `subject:"draft 1"`, 10, ""); err != nil || len(p.Drafts) != 1 || p.Drafts[0].ID != ids[1] {
		t.Errorf("ListDrafts q: %+v %v", p, err)
	}

	d, err := e.c.GetDraft(ctx, ids[0])
	if err != nil || d.Message.Text != "body 0" || d.Message.To != "bob@example.org" {
		t.Fatalf("GetDraft: %+v %v", d, err)
	}
	raw0, ref0, err := e.c.DraftRaw(ctx, ids[0])
	if err != nil || !strings.Contains(string(raw0), "Subject: draft 0") || ref0.MessageID != d.Message.ID {
		t.Fatalf("DraftRaw: %q %+v %v", raw0, ref0, err)
	}
	up, err := e.c.UpdateDraft(ctx, ids[0], []byte("To: erin@example.org\r\nSubject: draft 0 edited\r\n\r\nnew body"), "")
	if err != nil || up.ID != ids[0] || up.MessageID == ref0.MessageID {
		t.Fatalf("UpdateDraft: %+v %v", up, err)
	}
	if _, ref, _ := e.c.DraftRaw(ctx, ids[0]); ref.MessageID != up.MessageID {
		t.Errorf("after update DraftRaw names %s, want %s", ref.MessageID, up.MessageID)
	}

	sent, err := e.c.SendDraft(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if dl, ok := e.srv.Delivered(sent.ID); !ok || !slices.Equal(dl.Recipients, []string{"erin@example.org"}) {
		t.Errorf("sent draft delivered to %+v", dl.Recipients)
	}
	_, err = e.c.SendDraft(ctx, ids[0])
	var se *SendError
	if !errors.As(err, &se) || !se.Refused() || !errors.Is(err, ErrDraftNotFound) {
		t.Errorf("second SendDraft: %v", err)
	}
	if _, err := e.c.GetDraft(ctx, ids[0]); !errors.Is(err, ErrDraftNotFound) {
		t.Errorf("GetDraft of a sent draft: %v", err)
	}
	if _, err := e.c.UpdateDraft(ctx, ids[0], []byte("To: x@example.org\r\n\r\nx"), ""); !errors.Is(err, ErrDraftNotFound) {
		t.Errorf("UpdateDraft of a sent draft: %v", err)
	}

	// drafts.send is never retried: a 503 may have sent it.
	e.srv.Inject(localgmail.Fault{Op: "drafts.send", Status: 503})
	_, err = e.c.SendDraft(ctx, ids[1])
	if !errors.As(err, &se) || !se.MayHaveReached || e.srv.Calls("drafts.send") != 3 {
		t.Errorf("SendDraft after 503: %v (calls %d)", err, e.srv.Calls("drafts.send"))
	}
}

func TestLabelsModifyAndTrash(t *testing.T) {
	e := newEnv(t, []string{ScopeModify})
	ctx := context.Background()
	id, err := e.c.CreateLabel(ctx, "Receipts")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := e.c.ListLabels(ctx)
	if err != nil || !slices.Contains(labels, Label{ID: id, Name: "Receipts", Type: "user"}) || !slices.Contains(labels, Label{ID: "INBOX", Name: "INBOX", Type: "system"}) {
		t.Fatalf("ListLabels: %+v %v", labels, err)
	}
	if got, _ := e.c.LabelID(ctx, "receipts"); got != id {
		t.Errorf("LabelID = %q", got)
	}

	var ids []string
	for i := range 2500 {
		m, err := e.srv.Insert([]byte(fmt.Sprintf("From: a@example.org\r\nSubject: n%d\r\n\r\nx", i)), "INBOX", "UNREAD")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Id)
	}
	e.srv.ResetCounters()
	e.srv.Inject(localgmail.Fault{Op: "messages.batchModify", Status: 503}) // retried
	done, err := e.c.ModifyMessages(ctx, ids, LabelChange{Add: []string{id}, Remove: []string{"UNREAD", "INBOX"}})
	if err != nil || done != 2500 || e.srv.Calls("messages.batchModify") != 4 {
		t.Fatalf("ModifyMessages: done %d, %v, %d calls (3 chunks + 1 retry)", done, err, e.srv.Calls("messages.batchModify"))
	}
	if got := e.labelsOf(t, ids[2499]); got != id {
		t.Errorf("labels after batch: %s", got)
	}
	e.srv.Inject(localgmail.Fault{Op: "messages.batchModify", Status: 400, Reason: "invalidArgument"})
	done, err = e.c.ModifyMessages(ctx, ids, LabelChange{Add: []string{"STARRED"}})
	if err == nil || done != 0 || !strings.Contains(err.Error(), "0 of 2500 messages done") {
		t.Errorf("refused batch: done %d, %v", done, err)
	}
	if _, err := e.c.ModifyMessages(ctx, ids, LabelChange{}); !errors.Is(err, ErrNoLabelChange) {
		t.Errorf("empty change: %v", err)
	}

	first, thread := e.insert(t, "a@example.org", "Trip", "one", "Message-ID: <trip@example.org>")
	second, _ := e.insert(t, "b@example.org", "Re: Trip", "two", "In-Reply-To: <trip@example.org>")
	got, err := e.c.ModifyThread(ctx, thread, LabelChange{Add: []string{"STARRED"}, Remove: []string{"INBOX"}})
	if err != nil || len(got) != 2 || !slices.Equal(got[1].Labels, []string{"STARRED"}) {
		t.Fatalf("ModifyThread: %+v %v", got, err)
	}
	if _, err := e.c.ModifyThread(ctx, thread, LabelChange{Add: []string{"Label_404"}}); err == nil || errors.Is(err, ErrThreadNotFound) {
		t.Errorf("bad label on a thread must not read as a missing thread: %v", err)
	}
	if _, err := e.c.ModifyThread(ctx, "0123456789abcdef", LabelChange{Add: []string{"STARRED"}}); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("unknown thread: %v", err)
	}

	if ml, err := e.c.TrashMessage(ctx, first); err != nil || !slices.Contains(ml.Labels, "TRASH") {
		t.Fatalf("TrashMessage: %+v %v", ml, err)
	}
	if _, err := e.c.UntrashMessage(ctx, first); err != nil || e.labelsOf(t, first) != "STARRED" {
		t.Fatalf("UntrashMessage: %v %s", err, e.labelsOf(t, first))
	}
	if _, err := e.c.TrashThread(ctx, thread); err != nil || e.labelsOf(t, second) != "STARRED,TRASH" {
		t.Fatalf("TrashThread: %v %s", err, e.labelsOf(t, second))
	}
	if _, err := e.c.UntrashThread(ctx, thread); err != nil || e.labelsOf(t, second) != "STARRED" {
		t.Fatalf("UntrashThread: %v %s", err, e.labelsOf(t, second))
	}
	if _, err := e.c.TrashMessage(ctx, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TrashMessage unknown: %v", err)
	}
	if _, err := e.c.TrashThread(ctx, "web-url-token"); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("TrashThread malformed: %v", err)
	}
}

func TestOrganisingNeedsModifyScope(t *testing.T) {
	e := newEnv(t, nil) // readonly + compose
	id, _ := e.insert(t, "a@example.org", "x", "y")
	ctx := context.Background()
	var perm *PermissionError
	if _, err := e.c.ModifyMessages(ctx, []string{id}, LabelChange{Remove: []string{"UNREAD"}}); !errors.As(err, &perm) || perm.Scope != ScopeModify {
		t.Errorf("ModifyMessages: %v", err)
	}
	if _, err := e.c.TrashMessage(ctx, id); !errors.As(err, &perm) || perm.Scope != ScopeModify {
		t.Errorf("TrashMessage: %v", err)
	}
	if e.srv.Calls("messages.trash") != 1 {
		t.Errorf("a missing scope was retried: %d calls", e.srv.Calls("messages.trash"))
	}
}

func TestProfileAndAliases(t *testing.T) {
	e := newEnvWith(t, localgmail.Options{Aliases: []string{"Team@Example.com", "me@example.com"}}, nil)
	ctx := context.Background()
	p, err := e.c.GetProfile(ctx)
	if err != nil || p.EmailAddress != "me@example.com" {
		t.Fatalf("GetProfile: %+v %v", p, err)
	}
	aliases, err := e.c.SendAsAliases(ctx)
	if err != nil || len(aliases) != 3 || !aliases[0].Primary || aliases[1].Email != "Team@Example.com" || !aliases[1].Verified {
		t.Fatalf("SendAsAliases: %+v %v", aliases, err)
	}
	own, err := e.c.OwnAddresses(ctx)
	if err != nil || !slices.Equal(own, []string{"me@example.com", "team@example.com"}) {
		t.Errorf("OwnAddresses: %v %v", own, err)
	}
}
