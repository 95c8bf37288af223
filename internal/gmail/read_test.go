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
	if got := e.srv.Calls("messages.get"); got != 50 {
		t.Errorf("messages.get calls = %d, want 50 (more means the concurrency cap was tripped)", got)
	}
	if strings.Contains(e.logs.String(), "retrying") {
		t.Errorf("retries happened:\n%s", e.logs)
	}
}

func TestSearchNoResultsAndClamp(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.c.Search(context.Background(), "nothing-matches-this", 0)
	if err != nil || len(res) != 0 {
		t.Fatalf("Search = %v, %v", res, err)
	}
}

func TestSearchGetFailureFailsTheSearch(t *testing.T) {
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
	e := newEnv(t, nil)
	for _, id := range []string{"0123456789abcdef", "not-a-gmail-id", ""} {
		_, err := e.c.Message(context.Background(), id)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Message(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestThreadAndReplyParent(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	_, thread := e.insert(t, "Alice <alice@example.org>", "Plans", "first", "Message-ID: <p1@example.org>")
	id2, thread2 := e.insert(t, "Bob <bob@example.org>", "Re: Plans", "second",
		"Message-ID: <p2@example.org>", "In-Reply-To: <p1@example.org>", "References: <p1@example.org>",
		"Reply-To: Team <team@example.org>")
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
		p.Subject != "Re: Plans" || p.ReplyTo != "Team <team@example.org>" || p.GmailID != id2 || p.ThreadID != thread {
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
