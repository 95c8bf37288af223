package localgmail

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
)

// A message exercising the MIME parser: nested multipart, quoted-printable,
// base64, an attachment, RFC 2047 subject, and a header spelled "Message-Id".
const richMessage = "From: Alice Example <alice@example.com>\r\n" +
	"To: me@sandbox.local\r\n" +
	"Subject: =?UTF-8?Q?Caf=C3=A9_report?=\r\n" +
	"Message-Id: <rich-1@example.com>\r\n" +
	"Date: Tue, 10 Nov 2026 09:00:00 -0800\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"outer\"\r\n" +
	"\r\n" +
	"--outer\r\n" +
	"Content-Type: multipart/alternative; boundary=\"inner\"\r\n" +
	"\r\n" +
	"--inner\r\n" +
	"Content-Type: text/plain; charset=UTF-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"It's the caf=C3=A9 report, see attachment.\r\n" +
	"--inner\r\n" +
	"Content-Type: text/html; charset=UTF-8\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"PHA+SXQncyB0aGUgPGI+Y2Fmw6k8L2I+IHJlcG9ydC48L3A+\r\n" +
	"--inner--\r\n" +
	"--outer\r\n" +
	"Content-Type: application/pdf; name=\"report.pdf\"\r\n" +
	"Content-Disposition: attachment; filename=\"report.pdf\"\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"JVBERi0xLjQKJcfsj6IKMSAwIG9iago=\r\n" +
	"--outer--\r\n"

func TestGetFormats(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	ins := mustInsert(t, s, []byte(richMessage), "INBOX", "UNREAD")
	get := func(format string, hdrs ...string) *gmail.Message {
		t.Helper()
		m, err := svc.Users.Messages.Get("me", ins.Id).Format(format).MetadataHeaders(hdrs...).Do()
		if err != nil {
			t.Fatalf("get %s: %v", format, err)
		}
		return m
	}
	date := time.Date(2026, 11, 10, 17, 0, 0, 0, time.UTC).UnixMilli()

	t.Run("minimal", func(t *testing.T) {
		m := get("minimal")
		if m.Payload != nil || m.Raw != "" {
			t.Errorf("minimal has payload/raw: %+v", m)
		}
		if m.Id != ins.Id || m.ThreadId != ins.Id || m.InternalDate != date || m.HistoryId == 0 ||
			m.SizeEstimate != int64(len(richMessage)) || strings.Join(m.LabelIds, ",") != "INBOX,UNREAD" {
			t.Errorf("minimal fields: %+v", m)
		}
		if m.Snippet != "It&#39;s the café report, see attachment." {
			t.Errorf("snippet = %q", m.Snippet)
		}
	})
	t.Run("metadata keeps the message's own header case", func(t *testing.T) {
		m := get("metadata", "message-id", "SUBJECT")
		var names []string
		for _, h := range m.Payload.Headers {
			names = append(names, h.Name+"="+h.Value)
		}
		if got := strings.Join(names, "|"); got != "Subject=Café report|Message-Id=<rich-1@example.com>" {
			t.Errorf("headers = %s", got)
		}
		if m.Payload.MimeType != "multipart/mixed" || m.Payload.Parts != nil {
			t.Errorf("metadata payload: %+v", m.Payload)
		}
	})
	t.Run("full payload tree", func(t *testing.T) {
		m := get("full")
		p := m.Payload
		if p.MimeType != "multipart/mixed" || p.PartId != "" || len(p.Parts) != 2 || header(p, "From") != "Alice Example <alice@example.com>" {
			t.Fatalf("root: %+v", p)
		}
		alt := p.Parts[0]
		if alt.PartId != "0" || alt.MimeType != "multipart/alternative" || len(alt.Parts) != 2 {
			t.Fatalf("alt: %+v", alt)
		}
		for i, want := range []struct{ id, mime, text string }{
			{"0.0", "text/plain", "It's the café report, see attachment."},
			{"0.1", "text/html", "<p>It's the <b>café</b> report.</p>"},
		} {
			leaf := alt.Parts[i]
			data, err := base64.RawURLEncoding.DecodeString(leaf.Body.Data)
			if err != nil || strings.Contains(leaf.Body.Data, "=") {
				t.Errorf("%s: data not unpadded base64url: %q %v", want.id, leaf.Body.Data, err)
			}
			if leaf.PartId != want.id || leaf.MimeType != want.mime || string(data) != want.text || leaf.Body.Size != int64(len(want.text)) {
				t.Errorf("leaf %d: %+v data=%q", i, leaf, data)
			}
		}
		// 23 bytes: small enough that Gmail sends it inline, without an id
		// (TestAttachmentIDs has the attachmentId path).
		att := p.Parts[1]
		pdf, _ := base64.RawURLEncoding.DecodeString(att.Body.Data)
		if att.Filename != "report.pdf" || att.Body.AttachmentId != "" || !strings.HasPrefix(string(pdf), "%PDF-1.4") || att.Body.Size != 23 {
			t.Fatalf("attachment part: %+v body %+v", att, att.Body)
		}
	})
	t.Run("raw is padded base64url of the stored bytes", func(t *testing.T) {
		m := get("raw")
		b, err := base64.URLEncoding.DecodeString(m.Raw)
		if err != nil || string(b) != richMessage || m.Payload != nil {
			t.Errorf("raw: err=%v equal=%v", err, string(b) == richMessage)
		}
	})
}

// TestWireTypes checks the JSON itself: string historyId/internalDate,
// numeric sizes, forced empty partId, and the bare empty list.
func TestWireTypes(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fixedClock})
	base := startServer(t, s)
	fetch := func(path string) string {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if got := fetch("gmail/v1/users/me/messages?alt=json&prettyPrint=false"); got != `{"resultSizeEstimate":0}` {
		t.Errorf("empty list = %s", got)
	}
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "hi", "hello", dateHdr(fixedNow)))
	got := fetch("gmail/v1/users/me/messages/" + m.Id)
	for _, want := range []string{`"historyId":"`, fmt.Sprintf(`"internalDate":"%d"`, fixedNow.UnixMilli()),
		`"sizeEstimate":`, `"partId":""`, `"filename":""`} {
		if !strings.Contains(got, want) {
			t.Errorf("message JSON lacks %s: %s", want, got)
		}
	}
	if got := fetch("gmail/v1/users/me/messages?q=hello"); !strings.Contains(got, `"resultSizeEstimate":1`) {
		t.Errorf("list = %s", got)
	}
	if got := fetch("gmail/v1/users/me/nothing-here"); !strings.Contains(got, `"status":"NOT_FOUND"`) || !strings.Contains(got, `"domain":"global"`) {
		t.Errorf("unknown route = %s", got)
	}
}

func TestMessageErrors(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"))
	cases := []struct {
		name   string
		call   func() error
		code   int
		reason string
		text   string
	}{
		{"malformed id", func() error { _, err := svc.Users.Messages.Get("me", "nope").Do(); return err }, 400, "invalidArgument", "Invalid id value"},
		{"escaped id", func() error { _, err := svc.Users.Messages.Get("me", "a/b c").Do(); return err }, 400, "invalidArgument", "Invalid id value"},
		{"unknown id", func() error { _, err := svc.Users.Messages.Get("me", "0123456789abcdef").Do(); return err }, 404, "notFound", "Requested entity was not found."},
		{"unknown thread", func() error { _, err := svc.Users.Threads.Get("me", "0123456789abcdef").Do(); return err }, 404, "notFound", ""},
		{"bad format", func() error { _, err := svc.Users.Messages.Get("me", m.Id).Format("huge").Do(); return err }, 400, "invalidArgument", ""},
		{"raw thread", func() error { _, err := svc.Users.Threads.Get("me", m.Id).Format("raw").Do(); return err }, 400, "invalidArgument", ""},
		{"other user", func() error { _, err := svc.Users.Messages.Get("bob@example.com", m.Id).Do(); return err }, 403, "forbidden", "Delegation denied for me@sandbox.local"},
		{"bad page token", func() error { _, err := svc.Users.Messages.List("me").PageToken("zzz").Do(); return err }, 400, "invalidArgument", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantAPIError(t, c.call(), c.code, c.reason, c.text) })
	}
	if _, err := svc.Users.Messages.Get(s.Email(), m.Id).Do(); err != nil {
		t.Errorf("owner address as userId: %v", err)
	}
}

func TestListPaginationAndFilters(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	var ids []string // oldest first
	for i := 0; i < 7; i++ {
		labels := []string{"INBOX"}
		if i%2 == 0 {
			labels = append(labels, "UNREAD")
		}
		m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", fmt.Sprintf("item %d", i), "paged",
			dateHdr(fixedNow.Add(time.Duration(i-10)*time.Hour))), labels...)
		ids = append(ids, m.Id)
	}
	mustInsert(t, s, msg("spam@example.org", "me@sandbox.local", "spam", "paged"), "SPAM")
	mustInsert(t, s, msg("old@example.org", "me@sandbox.local", "trash", "paged"), "TRASH")

	var got []string
	tok := ""
	pages := 0
	for {
		res, err := svc.Users.Messages.List("me").Q("paged").MaxResults(3).PageToken(tok).Do()
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.ResultSizeEstimate != 7 {
			t.Errorf("estimate = %d", res.ResultSizeEstimate)
		}
		for _, m := range res.Messages {
			if m.Id != m.ThreadId || m.Snippet != "" || m.LabelIds != nil {
				t.Errorf("list item has more than id/threadId: %+v", m)
			}
			got = append(got, m.Id)
		}
		if tok = res.NextPageToken; tok == "" {
			break
		}
		// a token belongs to its query
		_, err = svc.Users.Messages.List("me").Q("other").PageToken(tok).Do()
		wantAPIError(t, err, 400, "invalidArgument", "Invalid pageToken")
	}
	var want []string
	for i := len(ids) - 1; i >= 0; i-- {
		want = append(want, ids[i])
	}
	if pages != 3 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pages=%d got %v want newest first %v", pages, got, want)
	}

	count := func(call func() (int, error)) int {
		n, err := call()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	list := func(q string, incl bool, labels ...string) func() (int, error) {
		return func() (int, error) {
			r, err := svc.Users.Messages.List("me").Q(q).IncludeSpamTrash(incl).LabelIds(labels...).Do()
			if err != nil {
				return 0, err
			}
			return len(r.Messages), nil
		}
	}
	for _, c := range []struct {
		name string
		call func() (int, error)
		want int
	}{
		{"spam and trash hidden", list("", false), 7},
		{"includeSpamTrash", list("", true), 9},
		{"labelIds all must match", list("", false, "INBOX", "UNREAD"), 4},
		{"labelIds SPAM reaches spam", list("", false, "SPAM"), 1},
		{"in:anywhere", list("in:anywhere", false), 9},
	} {
		if n := count(c.call); n != c.want {
			t.Errorf("%s: %d messages, want %d", c.name, n, c.want)
		}
	}

	for i := 0; i < 520; i++ {
		mustInsert(t, s, msg("bulk@example.com", "me@sandbox.local", "bulk", "bulk"))
	}
	res, err := svc.Users.Messages.List("me").Q("bulk").MaxResults(1000).Do()
	if err != nil || len(res.Messages) != 500 || res.NextPageToken == "" {
		t.Errorf("maxResults cap: n=%d next=%q err=%v", len(res.Messages), res.NextPageToken, err)
	}
	res, err = svc.Users.Messages.List("me").Q("bulk").Do()
	if err != nil || len(res.Messages) != 100 {
		t.Errorf("default page size: n=%d err=%v", len(res.Messages), err)
	}
}

func TestThreadsGet(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	first := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "Plans", "one", "Message-ID: <p1@example.com>", dateHdr(fixedNow.Add(-3*time.Hour))))
	// delivered out of order: the reply is dated earlier than a later reply
	mustInsert(t, s, msg("b@example.com", "me@sandbox.local", "RE: Plans", "three", "Message-ID: <p3@example.com>", "In-Reply-To: <p1@example.com>", dateHdr(fixedNow.Add(-1*time.Hour))))
	mustInsert(t, s, msg("c@example.com", "me@sandbox.local", "Re: Plans", "two", "Message-ID: <p2@example.com>", "References: <p1@example.com>", dateHdr(fixedNow.Add(-2*time.Hour))))
	mustInsert(t, s, msg("d@example.com", "me@sandbox.local", "Re: Other", "no", "In-Reply-To: <p1@example.com>"))

	th, err := svc.Users.Threads.Get("me", first.Id).Format("metadata").MetadataHeaders("Message-ID").Do()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range th.Messages {
		order = append(order, header(m.Payload, "Message-ID"))
		if m.ThreadId != first.Id || m.Payload.Parts != nil {
			t.Errorf("thread message: %+v", m)
		}
		if m.HistoryId > th.HistoryId {
			t.Errorf("thread historyId %d < message %d", th.HistoryId, m.HistoryId)
		}
	}
	if strings.Join(order, " ") != "<p1@example.com> <p2@example.com> <p3@example.com>" {
		t.Errorf("thread order = %v (different subject must not join)", order)
	}
}

// TestSandboxMailbox loads the demo mailbox shipped for `serve --sandbox`.
func TestSandboxMailbox(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	if err := s.SeedFS(os.DirFS("../sandbox/testdata/mailbox"), "."); err != nil {
		t.Fatal(err)
	}
	ids := func(q string) []string {
		t.Helper()
		r, err := svc.Users.Messages.List("me").Q(q).Do()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range r.Messages {
			out = append(out, m.Id)
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want int
	}{
		{"", 20}, {"in:anywhere", 21}, {"invoice", 2}, {"in:spam", 1}, {"is:unread", 2}, {"is:starred", 1},
		{"has:attachment filename:csv", 1}, {"cafe resume", 1}, {"in:sent", 2}, {"from:dana@example.com", 3},
		{`"faster code reviews"`, 1}, {"category:updates", 2}, {"label:Category_Updates", 2}, {"after:2026/11/01 before:2026/11/10", 5},
		{"in:drafts", 1}, {"cc:hello@sandbox.local", 1}, {"label:projects-atlas", 2}, {"has:attachment filename:pdf", 1}, {"filename:png", 1},
	} {
		if got := len(ids(c.q)); got != c.want {
			t.Errorf("q=%q: %d messages, want %d", c.q, got, c.want)
		}
	}
	seen := map[string]bool{}
	threads := map[string]int{}
	for _, id := range ids("in:anywhere") {
		m, _ := svc.Users.Messages.Get("me", id).Format("metadata").Do()
		threads[m.ThreadId]++
		if header(m.Payload, "Message-ID") == "" || header(m.Payload, "X-Sandbox-Labels") != "" {
			t.Errorf("%s: Message-ID %q, X-Sandbox-Labels %q", id, header(m.Payload, "Message-ID"), header(m.Payload, "X-Sandbox-Labels"))
		}
		seen[header(m.Payload, "Subject")] = true
	}
	if !seen["Café meeting – résumé"] {
		t.Errorf("RFC 2047 subject not decoded: %v", seen)
	}
	if len(threads) != 17 {
		t.Errorf("%d threads, want 17: %v", len(threads), threads)
	}
	atlas, err := svc.Users.Messages.List("me").Q(`subject:"project atlas kickoff"`).Do()
	if err != nil || len(atlas.Messages) != 3 {
		t.Fatalf("atlas search: %v %v", err, atlas)
	}
	th, err := svc.Users.Threads.Get("me", atlas.Messages[0].ThreadId).Context(context.Background()).Do()
	if err != nil || len(th.Messages) != 3 {
		t.Fatalf("atlas thread: %v %v", err, th)
	}
	// an LF-only multipart/alternative file parses into its two parts
	agenda, _ := svc.Users.Messages.Get("me", ids(`subject:"team offsite agenda"`)[0]).Do()
	if p := agenda.Payload; p.MimeType != "multipart/alternative" || len(p.Parts) != 2 || p.Parts[1].MimeType != "text/html" {
		t.Errorf("offsite agenda payload: %+v", p)
	}
	html := ids("newsletter")
	m, _ := svc.Users.Messages.Get("me", html[0]).Do()
	if !strings.HasPrefix(m.Snippet, "Example Weekly – Issue 42 This week: five tips") {
		t.Errorf("HTML-only snippet = %q", m.Snippet)
	}
}

// TestCharsets: Latin-1 and Windows-1252 mail is indexed and snippeted as
// UTF-8; body.data keeps the original bytes, as Gmail's does.
func TestCharsets(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	raw := "From: =?iso-8859-1?Q?Ren=E9?= <rene@example.org>\r\nTo: me@sandbox.local\r\n" +
		"Subject: =?windows-1252?Q?R=E9sum=E9_=96_draft?=\r\n" +
		"Content-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		"Le caf=E9 est pr=EAt =80 2.\r\n"
	m := mustInsert(t, s, []byte(raw), "INBOX")
	got, err := svc.Users.Messages.Get("me", m.Id).Do()
	if err != nil {
		t.Fatal(err)
	}
	if header(got.Payload, "Subject") != "Résumé – draft" || header(got.Payload, "From") != "René <rene@example.org>" {
		t.Errorf("decoded headers: %q / %q", header(got.Payload, "Subject"), header(got.Payload, "From"))
	}
	if got.Snippet != "Le café est prêt € 2." {
		t.Errorf("snippet = %q", got.Snippet)
	}
	data, _ := base64.RawURLEncoding.DecodeString(got.Payload.Body.Data)
	if string(data) != "Le caf\xe9 est pr\xeat \x80 2.\r\n" {
		t.Errorf("body.data = %q", data)
	}
	for _, q := range []string{"cafe", "pret", "from:rene", "from:rené", "subject:resume"} {
		if r, _ := svc.Users.Messages.List("me").Q(q).Do(); len(r.Messages) != 1 {
			t.Errorf("q=%q found %d", q, len(r.Messages))
		}
	}
}

// FuzzPageToken: a page token comes back from an agent as it likes it; the
// list handlers must answer a page or Gmail's 400, never panic or loop.
func FuzzPageToken(f *testing.F) {
	s := New(Options{Now: fixedClock})
	for i := range 7 {
		mustInsert(f, s, msg("a@example.com", "me@sandbox.local", fmt.Sprintf("item %d", i), "paged", dateHdr(fixedNow.Add(time.Duration(-i)*time.Hour))), "INBOX")
	}
	mustInsert(f, s, msg("", "b@example.org", "a draft", "paged"), "DRAFT")
	list := func(op, rawQuery string) (any, error) {
		c := &call{r: httptest.NewRequest("GET", "/gmail/v1/users/me/x?"+rawQuery, nil), op: op}
		if op == "drafts.list" {
			return s.listDrafts(c)
		}
		return s.listMessages(c)
	}
	first, _ := list("messages.list", "q=paged&maxResults=3")
	f.Add(first.(*gmail.ListMessagesResponse).NextPageToken, "3", "paged", false)
	f.Add("", "0", "", true)
	f.Add("Zm9vOjE6Mg", "-1", "x", false)
	f.Add("%%%", "99999999999", "in:anywhere", true)
	f.Fuzz(func(t *testing.T, tok, max, q string, drafts bool) {
		op := "messages.list"
		if drafts {
			op = "drafts.list"
		}
		v := url.Values{"pageToken": {tok}, "maxResults": {max}, "q": {q}}
		out, err := list(op, v.Encode())
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != 400 {
				t.Fatalf("%s token %q: %v", op, tok, err)
			}
			return
		}
		switch r := out.(type) {
		case *gmail.ListMessagesResponse:
			if len(r.Messages) > 500 || int64(len(r.Messages)) > r.ResultSizeEstimate {
				t.Fatalf("page of %d of %d", len(r.Messages), r.ResultSizeEstimate)
			}
		case *gmail.ListDraftsResponse:
			if len(r.Drafts) > 1 {
				t.Fatalf("%d drafts", len(r.Drafts))
			}
		}
	})
}
