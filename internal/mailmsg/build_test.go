package mailmsg

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"
)

var wordDec = new(mime.WordDecoder)

// parseBuilt reads a Build result back the way a recipient would.
func parseBuilt(t testing.TB, raw []byte) (*mail.Message, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("reading built message: %v\n%s", err, raw)
	}
	if got := msg.Header.Get("Content-Transfer-Encoding"); got != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding %q", got)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("decoding body: %v", err)
	}
	return msg, string(body)
}

// checkLines asserts CRLF everywhere and no header line over 998 octets.
func checkLines(t testing.TB, raw []byte) {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) ||
		bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\r")) {
		t.Fatalf("bare CR or LF in output:\n%q", raw)
	}
	for _, l := range bytes.Split(raw, []byte("\r\n")) {
		if len(l) > 998 {
			t.Fatalf("line of %d octets", len(l))
		}
	}
	// Quoted-printable keeps the body 7-bit whatever the text.
	if i := bytes.Index(raw, []byte("\r\n\r\n")); i >= 0 {
		for _, c := range raw[i:] {
			if c >= 0x80 {
				t.Fatalf("8-bit byte in body: %q", raw[i:])
			}
		}
	}
}

func mustAddr(t *testing.T, s string) *mail.Address {
	t.Helper()
	a, err := ParseAddress(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// mustRender renders body as RenderBody does, failing the test on an error.
func mustRender(t *testing.T, format BodyFormat, body string) Parts {
	t.Helper()
	p, err := RenderBody(format, body)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildBasic(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 2, 14, 9, 30, 0, 0, time.UTC)
	raw, err := Build(Outgoing{
		From: "Me <me@example.com>", To: mustAddr(t, `"Doe, John" <john@example.com>`),
		Subject: "Hello", Body: "line 1\nline 2\r\nline 3", Date: date,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, raw)
	msg, body := parseBuilt(t, raw)
	to, err := msg.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != "Doe, John" || to[0].Address != "john@example.com" {
		t.Fatalf("To = %v, %v", to, err)
	}
	if got, _ := msg.Header.Date(); !got.Equal(date) {
		t.Errorf("Date = %v", got)
	}
	id := msg.Header.Get("Message-ID")
	if !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") {
		t.Errorf("Message-ID = %q, want <random@example.com>", id)
	}
	if msg.Header.Get("MIME-Version") != "1.0" || msg.Header.Get("Content-Type") != "text/plain; charset=UTF-8" {
		t.Errorf("MIME headers: %v", msg.Header)
	}
	if body != "line 1\r\nline 2\r\nline 3" {
		t.Errorf("body = %q", body)
	}
	if _, ok := msg.Header["In-Reply-To"]; ok {
		t.Error("In-Reply-To present on a new message")
	}
}

func TestBuildDefaults(t *testing.T) {
	t.Parallel()
	raw, err := Build(Outgoing{To: mustAddr(t, "a@example.com"), Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := parseBuilt(t, raw)
	if _, ok := msg.Header["From"]; ok {
		t.Error("From written though empty")
	}
	if id := msg.Header.Get("Message-ID"); !strings.HasSuffix(id, "@mailgate.local>") {
		t.Errorf("Message-ID = %q", id)
	}
	if d, err := msg.Header.Date(); err != nil || time.Since(d) > time.Minute {
		t.Errorf("Date = %v, %v", d, err)
	}
	raw2, _ := Build(Outgoing{To: mustAddr(t, "a@example.com"), Subject: "s", Body: "b"})
	msg2, _ := parseBuilt(t, raw2)
	if msg.Header.Get("Message-ID") == msg2.Header.Get("Message-ID") {
		t.Error("two messages got the same Message-ID")
	}
}

func TestBuildSubjectEncoding(t *testing.T) {
	t.Parallel()
	for _, subj := range []string{
		"Plain ASCII subject",
		"Réunion à 14h — café ☕",
		"日本語の件名です。とても長い件名を書いて、複数のエンコードされた単語に分割されることを確認します。",
		strings.Repeat("Grüße ", 40),
		"=?UTF-8?Q?not_an_encoded_word?=",
		"  leading and trailing  ",
		"double  space",
		"tab\there",
		strings.Repeat("x", 300), // one word longer than a line
		"",
		"emoji 🎉 split 👨‍👩‍👧 family",
	} {
		raw, err := Build(Outgoing{To: mustAddr(t, "a@example.com"), Subject: subj, Body: "b"})
		if err != nil {
			t.Fatalf("%q: %v", subj, err)
		}
		checkLines(t, raw)
		msg, _ := parseBuilt(t, raw)
		got, err := wordDec.DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || got != subj {
			t.Errorf("subject %q came back as %q (%v); raw header %q", subj, got, err, msg.Header.Get("Subject"))
		}
		// Every encoded-word is at most 75 characters (RFC 2047 §2).
		for _, w := range strings.Fields(msg.Header.Get("Subject")) {
			if strings.HasPrefix(w, "=?") && len(w) > 75 {
				t.Errorf("encoded-word of %d chars: %q", len(w), w)
			}
		}
	}
}

func TestBuildRefusesInjection(t *testing.T) {
	t.Parallel()
	to := mustAddr(t, "a@example.com")
	cases := []struct {
		name string
		o    Outgoing
	}{
		{"CRLF subject", Outgoing{To: to, Subject: "hi\r\nBcc: evil@x.com"}},
		{"LF subject", Outgoing{To: to, Subject: "hi\nBcc: evil@x.com"}},
		{"CR subject", Outgoing{To: to, Subject: "hi\rBcc: evil@x.com"}},
		{"NUL subject", Outgoing{To: to, Subject: "hi\x00"}},
		{"LF in To name", Outgoing{To: &mail.Address{Name: "x\nBcc: e@x.com", Address: "a@example.com"}}},
		{"CRLF in To address", Outgoing{To: &mail.Address{Address: "a@example.com\r\nBcc: e@x.com"}}},
		{"LF in From", Outgoing{From: "me@example.com\nBcc: e@x.com", To: to}},
		{"LF in References", Outgoing{To: to, References: "<a@b>\nBcc: e@x.com"}},
		{"LF in In-Reply-To", Outgoing{To: to, InReplyTo: "<a@b>\r\n"}},
	}
	for _, c := range cases {
		raw, err := Build(c.o)
		if err == nil {
			t.Errorf("%s: built %q", c.name, raw)
			continue
		}
		var he *HeaderInjectionError
		if !errors.As(err, &he) {
			t.Errorf("%s: error %T %v, want *HeaderInjectionError", c.name, err, err)
		}
	}
	if err := CheckHeaderValue("Subject", "a\nb"); err == nil || err.Error() != "Invalid subject: line breaks and NUL characters are not allowed" {
		t.Errorf("CheckHeaderValue text = %v", err)
	}
}

func TestBuildRefusesOther(t *testing.T) {
	t.Parallel()
	to := mustAddr(t, "a@example.com")
	for name, o := range map[string]Outgoing{
		"no recipient":     {Subject: "s"},
		"list in From":     {From: "a@x.com, b@y.com", To: to},
		"hand-made list":   {To: &mail.Address{Address: "a@x.com, b@y.com"}},
		"bad In-Reply-To":  {To: to, InReplyTo: "not-an-id"},
		"bad Message-ID":   {To: to, MessageID: "<a@b> <c@d>"},
		"invalid UTF-8":    {To: to, Subject: "\xff"},
		"invalid UTF-8 bd": {To: to, Body: "\xfe"},
	} {
		if raw, err := Build(o); err == nil {
			t.Errorf("%s: built %q", name, raw)
		}
	}
}

func TestBuildDisplayNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		`"Doe, John" <john@example.com>`,
		`"Say \"hi\"" <q@example.com>`,
		"Zoë Ça <z@example.com>",
		`=?UTF-8?B?` + "w4lsaXNlIOKAnHRoZSBib3Nz4oCdLCBDRU8=" + `?= <e@example.com>`, // Élise “the boss”, CEO
		strings.Repeat("Very Long Name ", 10) + "<l@example.com>",
	} {
		// Built by hand: ParseAddress refuses some of these names as
		// recipients, but the encoder must still carry any name intact.
		a, err := mail.ParseAddress(name)
		if err != nil {
			t.Fatal(err)
		}
		o := Outgoing{To: a, Subject: "s", Body: "b"}
		headers := []string{"To"}
		if _, err := ParseAddress(name); err == nil {
			o.From, headers = name, append(headers, "From")
		}
		raw, err := Build(o)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		checkLines(t, raw)
		msg, _ := parseBuilt(t, raw)
		for _, h := range headers {
			got, err := msg.Header.AddressList(h)
			if err != nil || len(got) != 1 || got[0].Name != a.Name || got[0].Address != a.Address {
				t.Errorf("%s %q came back as %v (%v)", h, name, got, err)
			}
		}
	}
}

func TestBuildLongLinesAndBody(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("a", 500) + "\n" + strings.Repeat("é", 300) + "   \n" + "x=y\n.\nFrom here\r\nend\r"
	refs := ""
	for i := range 40 {
		refs += "<ref" + strings.Repeat("x", i) + "@example.com> "
	}
	raw, err := Build(Outgoing{
		To: mustAddr(t, "a@example.com"), Subject: "s", Body: body,
		InReplyTo: "<p@example.com>", References: refs,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, raw)
	for _, l := range strings.Split(string(raw), "\r\n") {
		if len(l) > 78 && !strings.HasPrefix(l, "References:") && !strings.HasPrefix(l, " ") {
			t.Errorf("line of %d chars: %q", len(l), l)
		}
	}
	msg, got := parseBuilt(t, raw)
	want := strings.NewReplacer("\r\n", "\r\n", "\r", "\r\n", "\n", "\r\n").Replace(body)
	if got != want {
		t.Errorf("body round trip:\n got %q\nwant %q", got, want)
	}
	if msg.Header.Get("References") != strings.TrimSpace(refs) {
		t.Errorf("References = %q", msg.Header.Get("References"))
	}
}

// normBody is what a body must decode to: every line end CRLF.
func normBody(s string) string {
	return strings.NewReplacer("\r\n", "\r\n", "\r", "\r\n", "\n", "\r\n").Replace(s)
}

func FuzzBuild(f *testing.F) {
	f.Add("Me <me@example.com>", "a@example.com", "Hello", "Body\n", "", "")
	f.Add("", `"Doe, John" <j@example.com>`, "Réunion ☕", strings.Repeat("long line ", 30), "<p@x.com>", "<a@x.com> <p@x.com>")
	f.Add("", "a@example.com", "x\r\nBcc: evil@x.com", "b", "", "")
	f.Add("e@example.com", "a@example.com, b@example.com", "s", "b", "", "")
	f.Add("", "=?UTF-8?Q?=E2=80=AE?= <a@example.com>", "=?utf-8?q?fake?=", "trailing  \r\n\r.\n", "", "")
	f.Fuzz(func(t *testing.T, from, to, subject, body, inReplyTo, refs string) {
		toAddr, err := ParseAddress(to)
		if err != nil {
			return
		}
		raw, err := Build(Outgoing{From: from, To: toAddr, Subject: subject, Body: body,
			InReplyTo: inReplyTo, References: refs})
		if err != nil {
			return
		}
		for _, v := range []string{from, subject, inReplyTo, refs} {
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("accepted a header value with CR/LF/NUL: %q", v)
			}
		}
		checkLines(t, raw)
		msg, gotBody := parseBuilt(t, raw)

		// Exactly the headers we meant to write, each once: nothing injected.
		want := map[string]bool{"To": true, "Subject": true, "Date": true, "Message-Id": true,
			"Mime-Version": true, "Content-Type": true, "Content-Transfer-Encoding": true}
		if from != "" {
			want["From"] = true
		}
		if strings.TrimSpace(inReplyTo) != "" {
			want["In-Reply-To"] = true
		}
		if strings.TrimSpace(refs) != "" {
			want["References"] = true
		}
		if len(msg.Header) != len(want) {
			t.Fatalf("got headers %v, want %v\n%s", msg.Header, want, raw)
		}
		for k, vs := range msg.Header {
			if !want[k] || len(vs) != 1 {
				t.Fatalf("unexpected header %s: %q\n%s", k, vs, raw)
			}
		}
		list, err := msg.Header.AddressList("To")
		if err != nil || len(list) != 1 || list[0].Name != toAddr.Name || list[0].Address != toAddr.Address {
			t.Fatalf("To %+v came back as %v (%v)\n%s", toAddr, list, err, raw)
		}
		if from != "" {
			fa, _ := ParseAddress(from)
			list, err := msg.Header.AddressList("From")
			if err != nil || len(list) != 1 || list[0].Name != fa.Name || list[0].Address != fa.Address {
				t.Fatalf("From %+v came back as %v (%v)", fa, list, err)
			}
		}
		if got, err := wordDec.DecodeHeader(msg.Header.Get("Subject")); err != nil || got != subject {
			t.Fatalf("subject %q came back as %q (%v)", subject, got, err)
		}
		for h, v := range map[string]string{"In-Reply-To": inReplyTo, "References": refs} {
			if got := msg.Header.Get(h); got != strings.Join(strings.Fields(v), " ") {
				t.Fatalf("%s %q came back as %q", h, v, got)
			}
		}
		if gotBody != normBody(body) {
			t.Fatalf("body %q came back as %q", body, gotBody)
		}
	})
}
