package gmail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/mail"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

func buildRaw(t *testing.T, to, subject, body string) []byte {
	t.Helper()
	a, err := mailmsg.ParseAddress(to)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := mailmsg.Build(mailmsg.Outgoing{To: a, Subject: subject, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestSendSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	sent, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
	if err != nil {
		t.Fatal(err)
	}
	if sent.ID == "" || sent.ThreadID == "" || len(e.srv.Sent()) != 1 {
		t.Fatalf("sent = %+v, server has %d sent", sent, len(e.srv.Sent()))
	}
}

func TestSend503IsAttemptedOnceAndMayHaveReached(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.Inject(localgmail.Fault{Op: "messages.send", Status: 503, HTML: true})
	_, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
	var se *SendError
	if !errors.As(err, &se) || !se.MayHaveReached || se.NeverReached() || se.Refused() {
		t.Fatalf("err = %#v, want *SendError with MayHaveReached", err)
	}
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 503 {
		t.Errorf("the 503 is not reachable from %v", err)
	}
	e.wantCalls(t, "messages.send", 1)
}

func TestSendDroppedConnectionMayHaveReached(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.Inject(localgmail.Fault{Op: "messages.send", Drop: true})
	_, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
	var se *SendError
	if !errors.As(err, &se) || !se.MayHaveReached {
		t.Fatalf("err = %v, want *SendError with MayHaveReached", err)
	}
	e.wantCalls(t, "messages.send", 1)
	// The server did perform it: exactly the case a resend would duplicate.
	if got := len(e.srv.Sent()); got != 1 {
		t.Errorf("server sent %d messages, want 1", got)
	}
}

func TestSend429IsNotRetriedAndDidNotReach(t *testing.T) {
	t.Parallel()
	for _, f := range []localgmail.Fault{
		{Op: "messages.send", Status: 429, Reason: "rateLimitExceeded"},
		{Op: "messages.send", Status: 403, Reason: "userRateLimitExceeded", Message: "User-rate limit exceeded.  Retry after 2099-01-01T00:00:00.000Z"},
		{Op: "messages.send", Status: 400, Message: "Invalid To header"},
	} {
		e := newEnv(t, nil)
		e.srv.Inject(f)
		_, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
		var se *SendError
		if !errors.As(err, &se) || se.MayHaveReached {
			t.Fatalf("%d %s: err = %v, want *SendError without MayHaveReached", f.Status, f.Reason, err)
		}
		// Google answered: a refusal, not "never reached" (the gate keeps the slot).
		if !se.Refused() || se.NeverReached() {
			t.Errorf("%d: Refused=%v NeverReached=%v, want a refusal", f.Status, se.Refused(), se.NeverReached())
		}
		if got := e.srv.Calls("messages.send"); got != 1 {
			t.Errorf("%d: messages.send calls = %d, want 1", f.Status, got)
		}
		if len(e.srv.Sent()) != 0 {
			t.Errorf("%d: server sent a message", f.Status)
		}
		var rl *RateLimitedError
		if f.Message != "" && f.Status == 403 && !errors.As(err, &rl) {
			t.Errorf("403 with a time: want *RateLimitedError inside, got %v", err)
		}
	}
}

func TestSendDialErrorDidNotReach(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: the dial fails
	c, err := New(context.Background(), Options{
		Endpoint:    "http://" + addr + "/",
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
	var se *SendError
	if !errors.As(err, &se) || se.MayHaveReached || !se.NeverReached() || se.Refused() {
		t.Fatalf("err = %v, want *SendError that never reached Google", err)
	}
}

func TestSendCancelledContextDidNotReach(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.c.Send(ctx, buildRaw(t, "bob@example.org", "hi", "hello"), "")
	var se *SendError
	if !errors.As(err, &se) || se.MayHaveReached {
		t.Fatalf("err = %v, want *SendError without MayHaveReached", err)
	}
	e.wantCalls(t, "messages.send", 0)
}

func TestSend401IsNotRetriedButRefreshesNextTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if _, err := e.c.Profile(context.Background()); err != nil { // obtain an access token
		t.Fatal(err)
	}
	e.srv.ExpireAccessTokens()
	_, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), "")
	var se *SendError
	if !errors.As(err, &se) || se.MayHaveReached {
		t.Fatalf("err = %v, want *SendError without MayHaveReached", err)
	}
	e.wantCalls(t, "messages.send", 1)
	if _, err := e.c.Send(context.Background(), buildRaw(t, "bob@example.org", "hi", "hello"), ""); err != nil {
		t.Fatalf("second send after the forced refresh: %v", err)
	}
}

func TestHeaderInjectionRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	before := e.srv.TotalCalls()
	to, _ := mailmsg.ParseAddress("bob@example.org")
	for _, o := range []mailmsg.Outgoing{
		{To: to, Subject: "hi\r\nBcc: evil@example.net", Body: "x"},
		{To: to, Subject: "hi\nBcc: evil@example.net", Body: "x"},
	} {
		if raw, err := mailmsg.Build(o); err == nil {
			e.c.Send(context.Background(), raw, "")
			t.Fatalf("Build accepted %q", o.Subject)
		}
	}
	for _, to := range []string{"bob@example.org\r\nBcc: evil@example.net", "bob@example.org, evil@example.net"} {
		if _, err := mailmsg.ParseAddress(to); err == nil {
			t.Fatalf("ParseAddress accepted %q", to)
		}
	}
	if got := e.srv.TotalCalls(); got != before {
		t.Errorf("TotalCalls went from %d to %d", before, got)
	}
}

func TestNonASCIISubjectArrivesEncoded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	subject := "Réunion demain ☕ — 日本語の件名 with a long tail to force several encoded-words"
	body := "Grüße,\nZoë\n"
	sent, err := e.c.Send(context.Background(), buildRaw(t, "Zoë Ça <bob@example.org>", subject, body), "")
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := e.srv.RawMessage(sent.ID)
	if !ok {
		t.Fatal("server has no raw message")
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	enc := msg.Header.Get("Subject")
	if enc == subject {
		t.Errorf("Subject went out unencoded")
	}
	got, err := new(mime.WordDecoder).DecodeHeader(enc)
	if err != nil || got != subject {
		t.Errorf("Subject decodes to %q (%v), want %q", got, err, subject)
	}
	to, err := msg.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != "Zoë Ça" {
		t.Errorf("To = %v (%v)", to, err)
	}
	b, _ := io.ReadAll(msg.Body)
	if bytes.ContainsFunc(b, func(r rune) bool { return r > 127 }) {
		t.Errorf("body not 7-bit: %q", b)
	}
	// And read back through the adapter.
	m, err := e.c.Message(context.Background(), sent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != subject || m.Text != "Grüße,\nZoë\n" {
		t.Errorf("read back subject %q text %q", m.Subject, m.Text)
	}
}

func TestCreateDraftRetriesAndLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.srv.Inject(localgmail.Fault{Op: "drafts.create", Status: 503})
	id, err := e.c.CreateDraft(context.Background(), buildRaw(t, "bob@example.org", "draft", "d"), "")
	if err != nil || id == "" {
		t.Fatalf("CreateDraft = %q, %v", id, err)
	}
	e.wantCalls(t, "drafts.create", 2)
	if !bytes.Contains([]byte(e.logs.String()), []byte("duplicate draft")) {
		t.Errorf("retry not logged:\n%s", e.logs)
	}
}

func TestDraftLifecycle(t *testing.T) {
	t.Parallel()
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
	approved, ref, _ := e.c.DraftRaw(ctx, ids[0])
	if ref.MessageID != up.MessageID {
		t.Errorf("after update DraftRaw names %s, want %s", ref.MessageID, up.MessageID)
	}

	// An edit made after the content was read is not what is sent: the
	// draft goes out with the content SendDraft was given.
	if _, err := e.c.UpdateDraft(ctx, ids[0], []byte("To: mallory@example.org\r\nSubject: draft 0 hijacked\r\n\r\nwire money"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.SendDraft(ctx, ids[0], nil, ""); err == nil || e.srv.Calls("drafts.send") != 0 {
		t.Fatalf("SendDraft without content: %v (calls %d)", err, e.srv.Calls("drafts.send"))
	}
	sent, err := e.c.SendDraft(ctx, ids[0], approved, "")
	if err != nil {
		t.Fatal(err)
	}
	if dl, ok := e.srv.Delivered(sent.ID); !ok || !slices.Equal(dl.Recipients, []string{"erin@example.org"}) {
		t.Errorf("sent draft delivered to %+v", dl.Recipients)
	}
	if raw, _ := e.srv.RawMessage(sent.ID); !strings.Contains(string(raw), "Subject: draft 0 edited") || strings.Contains(string(raw), "hijacked") {
		t.Errorf("sent draft content:\n%s", raw)
	}
	_, err = e.c.SendDraft(ctx, ids[0], approved, "")
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
	_, err = e.c.SendDraft(ctx, ids[1], raw0, "")
	if !errors.As(err, &se) || !se.MayHaveReached || e.srv.Calls("drafts.send") != 3 {
		t.Errorf("SendDraft after 503: %v (calls %d)", err, e.srv.Calls("drafts.send"))
	}
}
