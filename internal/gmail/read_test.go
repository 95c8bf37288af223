package gmail

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

func TestSearch50BoundedConcurrencyInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for i := range 50 {
		e.insert(t, fmt.Sprintf("Sender %02d <s%02d@example.org>", i, i), fmt.Sprintf("report %02d", i), "body")
	}
	e.srv.SetConcurrencyCap(8)
	e.srv.SetLatency(20 * time.Millisecond) // make the gets overlap
	ctx := context.Background()

	// The order messages.list gives, to compare with.
	list, err := e.c.svc.Users.Messages.List(user).Q("report").MaxResults(50).Context(ctx).Do()
	if err != nil {
		t.Fatal(err)
	}
	e.srv.ResetCounters()

	res, err := e.c.Search(ctx, "report", 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 50 || len(list.Messages) != 50 {
		t.Fatalf("got %d results, list has %d", len(res), len(list.Messages))
	}
	for i, s := range res {
		if s.ID != list.Messages[i].Id {
			t.Fatalf("result %d is %s, list order says %s", i, s.ID, list.Messages[i].Id)
		}
		if !strings.HasPrefix(s.Subject, "report ") || !strings.Contains(s.From, "@example.org") ||
			s.MessageID == "" || s.ThreadID == "" || s.Time.IsZero() || s.Date == "" || s.To != "me@example.com" {
			t.Errorf("summary %d incomplete: %+v", i, s)
		}
	}
	// The cap answers 429 when tripped, which would show up as retries.
	e.wantCalls(t, "messages.get", 50, "more means the concurrency cap was tripped")
	if strings.Contains(e.logs.String(), "retrying") {
		t.Errorf("retries happened:\n%s", e.logs)
	}
}

func TestSearchNoResultsAndClamp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	res, err := e.c.Search(context.Background(), "nothing-matches-this", 0)
	if err != nil || len(res) != 0 {
		t.Fatalf("Search = %v, %v", res, err)
	}
}

func TestSearchGetFailureFailsTheSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.insert(t, "a@example.org", "one", "x")
	e.insert(t, "a@example.org", "two", "x")
	e.srv.Inject(localgmail.Fault{Op: "messages.get", Status: 503, Times: -1})
	_, err := e.c.Search(context.Background(), "", 5)
	if err == nil || !strings.HasPrefix(err.Error(), "searching messages: fetching message ") {
		t.Fatalf("err = %v", err)
	}
}

func TestMessageFullHTMLAndAttachments(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	raw := "--b1\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"<p>Hello <b>Bob</b>,</p><script>x()</script><p>See <a href=3D\"https://ex.org/r\">the report</a>\u200b.</p>\r\n" +
		"--b1\r\nContent-Type: application/pdf; name=\"r.pdf\"\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n" +
		"--b1--\r\n"
	id, thread := e.insert(t, "=?UTF-8?Q?Zo=C3=AB?= <z@example.org>", "=?UTF-8?B?UsOpdW5pb24=?=", raw,
		"MIME-Version: 1.0", "Content-Type: multipart/mixed; boundary=\"b1\"", "Cc: c@example.org", "Reply-To: r@example.org")
	m, err := e.c.Message(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m.ThreadID != thread || m.Subject != "Réunion" || m.From != "Zoë <z@example.org>" ||
		m.Cc != "c@example.org" || m.ReplyTo != "r@example.org" || m.MessageID == "" {
		t.Errorf("headers: %+v", m)
	}
	if want := "Hello Bob,\n\nSee the report (https://ex.org/r)."; m.Text != want {
		t.Errorf("Text = %q, want %q", m.Text, want)
	}
	if !slices.Equal(m.Attachments, []string{"r.pdf"}) || !slices.Contains(m.Labels, "INBOX") {
		t.Errorf("attachments %v labels %v", m.Attachments, m.Labels)
	}
}

func TestMessageNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, id := range []string{"0123456789abcdef", "not-a-gmail-id", ""} {
		_, err := e.c.Message(context.Background(), id)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Message(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestThreadAndReplyParent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	_, thread := e.insert(t, "Alice <alice@example.org>", "Plans", "first", "Message-ID: <p1@example.org>")
	id2, thread2 := e.insert(t, "Bob <bob@example.org>", "Re: Plans", "second",
		"Message-ID: <p2@example.org>", "In-Reply-To: <p1@example.org>", "References: <p1@example.org>",
		"Reply-To: Team <team@example.org>", "Cc: Carol <carol@example.org>, =?UTF-8?Q?Ren=C3=A9?= <rene@example.org>")
	if thread2 != thread {
		t.Fatalf("the local server did not thread the reply (%s vs %s)", thread2, thread)
	}
	msgs, err := e.c.Thread(ctx, thread)
	if err != nil || len(msgs) != 2 || msgs[0].Text != "first" || msgs[1].Text != "second" {
		t.Fatalf("Thread = %v, %v", msgs, err)
	}

	p, err := e.c.ReplyParent(ctx, thread, id2)
	if err != nil {
		t.Fatal(err)
	}
	if p.MessageID != "<p2@example.org>" || p.References != "<p1@example.org>" || p.InReplyTo != "<p1@example.org>" ||
		p.Subject != "Re: Plans" || p.ReplyTo != "Team <team@example.org>" || p.GmailID != id2 || p.ThreadID != thread ||
		p.To != "me@example.com" || p.Cc != "Carol <carol@example.org>, René <rene@example.org>" {
		t.Errorf("parent = %+v", p)
	}
	// The latest usable message is chosen when no message id is given.
	if p, err := e.c.ReplyParent(ctx, thread, ""); err != nil || p.MessageID != "<p2@example.org>" {
		t.Errorf("ReplyParent(thread, \"\") = %+v, %v", p, err)
	}

	// Reply with the parent's headers; the server keeps it in the thread.
	to, _ := mailmsg.ParseAddress(p.ReplyTo)
	raw, err := mailmsg.Build(mailmsg.Outgoing{To: to, Subject: mailmsg.ReplySubject(p.Subject), Body: "ok",
		InReplyTo: p.MessageID, References: mailmsg.ReplyReferences(p.References, p.InReplyTo, p.MessageID)})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := e.c.Send(ctx, raw, p.ThreadID)
	if err != nil || sent.ThreadID != thread {
		t.Fatalf("reply sent = %+v, %v", sent, err)
	}
	sentRaw, _ := e.srv.RawMessage(sent.ID)
	if !strings.Contains(string(sentRaw), "References: <p1@example.org> <p2@example.org>\r\n") {
		t.Errorf("reply headers:\n%s", sentRaw)
	}

}

func TestReplyParentErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	id, thread := e.insert(t, "alice@example.org", "one", "x")
	other, _ := e.insert(t, "bob@example.org", "unrelated", "y")

	if _, err := e.c.ReplyParent(ctx, "0123456789abcdef", id); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("unknown thread: %v", err)
	}
	if _, err := e.c.ReplyParent(ctx, "FMfcgzQXJGmPbtNl", id); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("web-URL thread token: %v", err)
	}
	if _, err := e.c.ReplyParent(ctx, thread, other); !errors.Is(err, ErrNotInThread) {
		t.Errorf("message of another thread: %v", err)
	}
	noID, noIDThread := e.insertWithoutMessageID(t)
	if _, err := e.c.ReplyParent(ctx, noIDThread, noID); !errors.Is(err, ErrNoMessageID) {
		t.Errorf("parent without Message-ID: %v", err)
	}
}

// insertWithoutMessageID stores a message that has no Message-ID header.
func (e *env) insertWithoutMessageID(t *testing.T) (id, threadID string) {
	t.Helper()
	m, err := e.srv.Insert([]byte("From: x@example.org\r\nTo: me@example.com\r\nSubject: no id\r\n\r\nbody"), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	return m.Id, m.ThreadId
}

func TestSearchPagesEveryMessageOnce(t *testing.T) {
	t.Parallel()
	// Paging is checked here, not pacing (the benchmarks measure that): a
	// burst covering all 120 gets keeps the 40/s pacer from holding them
	// for two seconds.
	e := newEnv(t, nil, func(o *Options) { o.FetchBurst = 200 })
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

// TestAttachmentsListedAndFetched, for both shapes Gmail uses: small
// attachments inline (Data, no ID) and attachments stored apart (an ID,
// new on every read, every one usable with GetAttachment).
func TestAttachmentsListedAndFetched(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		inline int // localgmail.Options.InlineMax
	}{{"small ones inline", 0}, {"every one by id", -1}} {
		t.Run(c.name, func(t *testing.T) { testAttachments(t, c.inline) })
	}
}

func testAttachments(t *testing.T, inlineMax int) {
	e := newEnvWith(t, localgmail.Options{InlineMax: inlineMax}, nil)
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
	again, err := e.c.Message(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, mime, part string
		size             int64
	}{{"notes.txt", "text/plain", "1", 18}, {"dot.png", "image/png", "2", 70}, {"", "image/gif", "3", 14}}
	for i, w := range want {
		f := m.Files[i]
		if f.Filename != w.name || f.MimeType != w.mime || f.Size != w.size || f.PartID != w.part || (f.ID == "") != (inlineMax >= 0) {
			t.Errorf("file %d = %+v, want %+v (an id: %v)", i, f, w, inlineMax < 0)
		}
		data := f.Data
		if f.ID != "" {
			if again.Files[i].ID == f.ID {
				t.Errorf("file %d: the same attachmentId on two reads (Gmail's change)", i)
			}
			if data, err = e.c.GetAttachment(ctx, id, f.ID); err != nil { // the first read's id, after a second read
				t.Errorf("GetAttachment %s: %v", w.name, err)
			}
		}
		if int64(len(data)) != f.Size {
			t.Errorf("%s: %d bytes, want %d", w.name, len(data), f.Size)
		}
		if i == 0 && string(data) != "line one\r\nline two" {
			t.Errorf("notes.txt = %q", data)
		}
		if i == 1 && !strings.HasPrefix(string(data), "\x89PNG") {
			t.Errorf("dot.png = %q", data)
		}
	}
	other, _ := e.insert(t, "a@example.org", "other", "x")
	if _, err := e.c.GetAttachment(ctx, other, "ANGjdJ"+strings.Repeat("x", 30)); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown attachment id: %v", err)
	}
	if inlineMax < 0 {
		if _, err := e.c.GetAttachment(ctx, other, m.Files[0].ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("attachment id of another message: %v", err)
		}
	}
}
