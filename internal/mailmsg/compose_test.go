package mailmsg

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// part is one leaf of a parsed message.
type part struct {
	mediaType string
	params    map[string]string
	filename  string // from Content-Disposition (multipart.Part.FileName)
	body      []byte // decoded
}

// parseMIME reads raw back as a recipient would (net/mail, mime/multipart)
// and returns the top media type and the leaves in order.
func parseMIME(t testing.TB, raw []byte) (*mail.Message, string, []part) {
	t.Helper()
	checkCRLF(t, raw)
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("reading message: %v\n%s", err, raw)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type: %v", err)
	}
	var leaves []part
	var walk func(mt string, params map[string]string, cte string, r io.Reader, filename string)
	walk = func(mt string, params map[string]string, cte string, r io.Reader, filename string) {
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(r, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatalf("reading %s part: %v", mt, err)
				}
				pmt, pparams, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
				if err != nil {
					t.Fatalf("part Content-Type %q: %v", p.Header.Get("Content-Type"), err)
				}
				walk(pmt, pparams, p.Header.Get("Content-Transfer-Encoding"), p, p.FileName())
			}
		}
		var body []byte
		switch strings.ToLower(cte) {
		case "quoted-printable":
			body, err = io.ReadAll(quotedprintable.NewReader(r))
		case "base64":
			body, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, r))
		default:
			t.Fatalf("%s part with transfer encoding %q", mt, cte)
		}
		if err != nil {
			t.Fatalf("decoding %s part: %v", mt, err)
		}
		leaves = append(leaves, part{mediaType: mt, params: params, filename: filename, body: body})
	}
	walk(mt, params, msg.Header.Get("Content-Transfer-Encoding"), msg.Body, "")
	return msg, mt, leaves
}

// checkCRLF asserts CRLF line ends, 7-bit bytes, and lines within RFC 5322's
// 998 octets (78 for base64 lines).
func checkCRLF(t testing.TB, raw []byte) {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) ||
		bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\r")) {
		t.Fatalf("bare CR or LF in output")
	}
	for _, l := range bytes.Split(raw, []byte("\r\n")) {
		if len(l) > 998 {
			t.Fatalf("line of %d octets", len(l))
		}
	}
	for _, c := range raw {
		if c >= 0x80 {
			t.Fatalf("8-bit byte in output")
		}
	}
}

// goldenOutgoing is the fixed message of the golden files.
func goldenOutgoing(t *testing.T) Outgoing {
	return Outgoing{
		From:    "Me <me@example.com>",
		To:      mustAddr(t, "Ann <ann@example.com>"),
		ToList:  []*mail.Address{mustAddr(t, "bob@example.com")},
		Cc:      []*mail.Address{mustAddr(t, "Zoë <zoe@example.org>"), mustAddr(t, "cy@example.org")},
		Bcc:     []*mail.Address{mustAddr(t, "hidden@example.net")},
		Subject: "Quarterly report",
		Date:    time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), MessageID: "<golden@example.com>",
		Boundary: "golden",
	}
}

func checkGolden(t *testing.T, name string, raw []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n%s", name, raw)
	}
}

func TestComposeGolden(t *testing.T) {
	t.Parallel()
	md := mustRender(t, FormatMarkdown, "Hi all,\n\nThe **numbers** are in:\n\n- revenue up\n- costs down\n\n<script>alert(1)</script>\n")
	pdf := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 40)...)
	cases := []struct {
		name string
		edit func(*Outgoing)
	}{
		{"text-cc-bcc.eml", func(o *Outgoing) { o.Body = "Plain text.\n" }},
		{"markdown.eml", func(o *Outgoing) { o.Body, o.HTML = md.Text, md.HTML }},
		{"markdown-attachments.eml", func(o *Outgoing) {
			o.Body, o.HTML = md.Text, md.HTML
			o.Attachments = []Attachment{
				{Name: "report.pdf", Data: pdf},
				{Name: "Résumé – 2026 ☕.txt", Data: []byte("plain notes\n")},
			}
		}},
		{"text-attachment.eml", func(o *Outgoing) {
			o.Body = "See attached."
			o.Attachments = []Attachment{{Name: "data", Data: []byte("\x89PNG\r\n\x1a\n0000")}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := goldenOutgoing(t)
			c.edit(&o)
			raw, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.name, raw)
			parseMIME(t, raw) // reads back with net/mail and mime/multipart
			again, _ := Build(o)
			if !bytes.Equal(raw, again) {
				t.Error("two builds of the same message differ")
			}
		})
	}
}

func TestComposeRecipients(t *testing.T) {
	t.Parallel()
	o := goldenOutgoing(t)
	o.Body = "x"
	raw, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	msg, _, _ := parseMIME(t, raw)
	for _, c := range []struct {
		field string
		want  []string
	}{
		{"To", []string{"ann@example.com", "bob@example.com"}},
		{"Cc", []string{"zoe@example.org", "cy@example.org"}},
		// Gmail's send takes Bcc recipients from this header and strips it
		// from the delivered copies.
		{"Bcc", []string{"hidden@example.net"}},
	} {
		l, err := msg.Header.AddressList(c.field)
		if err != nil || len(l) != len(c.want) {
			t.Fatalf("%s = %v, %v", c.field, l, err)
		}
		for i, a := range l {
			if a.Address != c.want[i] {
				t.Errorf("%s[%d] = %q, want %q", c.field, i, a.Address, c.want[i])
			}
		}
	}
	if l, _ := msg.Header.AddressList("Cc"); l[0].Name != "Zoë" {
		t.Errorf("Cc name = %q", l[0].Name)
	}

	// Cc or Bcc alone is a recipient; none at all is not.
	if _, err := Build(Outgoing{Bcc: []*mail.Address{mustAddr(t, "a@example.com")}, Subject: "s", Body: "b"}); err != nil {
		t.Errorf("Bcc-only: %v", err)
	}
	if _, err := Build(Outgoing{Cc: []*mail.Address{nil}, Subject: "s", Body: "b"}); !errors.Is(err, ErrNoRecipient) {
		t.Errorf("no recipient: %v", err)
	}
	// Every list is validated like To.
	for _, o := range []Outgoing{
		{To: mustAddr(t, "a@example.com"), Cc: []*mail.Address{{Address: "x@example.com\r\nBcc: e@evil.com"}}},
		{To: mustAddr(t, "a@example.com"), Bcc: []*mail.Address{{Address: "nodomain"}}},
		{ToList: []*mail.Address{{Name: "a\x00", Address: "a@example.com"}}},
	} {
		if raw, err := Build(o); err == nil {
			t.Errorf("accepted %+v:\n%s", o, raw)
		}
	}
}

func TestComposeStructure(t *testing.T) {
	t.Parallel()
	md := mustRender(t, FormatMarkdown, "# Title\n\nSome *text* and [a link](https://example.com).")
	base := Outgoing{To: mustAddr(t, "a@example.com"), Subject: "s"}

	// Markdown: multipart/alternative, text first.
	o := base
	o.Body, o.HTML = md.Text, md.HTML
	raw, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	_, mt, leaves := parseMIME(t, raw)
	if mt != "multipart/alternative" || len(leaves) != 2 || leaves[0].mediaType != "text/plain" || leaves[1].mediaType != "text/html" {
		t.Fatalf("structure %s %+v", mt, leaves)
	}
	if string(leaves[0].body) != strings.ReplaceAll(md.Text, "\n", "\r\n") {
		t.Errorf("text part %q", leaves[0].body)
	}
	if got := string(leaves[1].body); !strings.Contains(got, "<h1>Title</h1>") || !strings.Contains(got, `href="https://example.com"`) {
		t.Errorf("html part %q", got)
	}

	// Attachments: multipart/mixed, the body first, bytes and names intact.
	bin := make([]byte, 1000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	o.Attachments = []Attachment{
		{Name: "naïve résumé 📎.bin", Data: bin},
		{Name: "../../etc/passwd", ContentType: "text/plain", Data: []byte("x")},
		{Name: "notes.txt", Data: []byte("hello\n")},
		{Name: "noext", Data: []byte("%PDF-1.7 ...")},
	}
	raw, err = Build(o)
	if err != nil {
		t.Fatal(err)
	}
	_, mt, leaves = parseMIME(t, raw)
	if mt != "multipart/mixed" || len(leaves) != 6 {
		t.Fatalf("structure %s, %d leaves", mt, len(leaves))
	}
	want := []struct{ name, typ string }{
		{"naïve résumé 📎.bin", "application/octet-stream"},
		{"_.._etc_passwd", "text/plain"},
		{"notes.txt", "text/plain"},
		{"noext", "application/pdf"},
	}
	for i, w := range want {
		l := leaves[2+i]
		if l.filename != w.name || l.mediaType != w.typ || !bytes.Equal(l.body, o.Attachments[i].Data) {
			t.Errorf("attachment %d: %q %q %d bytes, want %q %q", i, l.filename, l.mediaType, len(l.body), w.name, w.typ)
		}
		// The legacy name= parameter decodes (RFC 2047) to the same name.
		if n, err := wordDec.DecodeHeader(l.params["name"]); err != nil || n != w.name {
			t.Errorf("attachment %d: name=%q decodes to %q, %v", i, l.params["name"], n, err)
		}
	}
	// base64 lines are 76 characters.
	for _, line := range strings.Split(string(raw), "\r\n") {
		if len(line) > 76 && !strings.Contains(line, ":") && !strings.HasPrefix(line, " ") {
			t.Fatalf("body line of %d characters: %q", len(line), line)
		}
	}
}

func TestComposeTooLarge(t *testing.T) {
	t.Parallel()
	o := Outgoing{To: mustAddr(t, "a@example.com"), Subject: "s", Body: "b",
		Attachments: []Attachment{{Name: "big.bin", Data: make([]byte, 19_000_000)}}}
	_, err := Build(o)
	var tl *MessageTooLargeError
	if !errors.As(err, &tl) || tl.Limit != MaxMessageBytes || tl.Size <= MaxMessageBytes {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"25 MB", "(25000000 bytes)", "26 MB encoded (26000577 bytes)"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	o.Attachments[0].Data = make([]byte, 18_000_000) // 24 MB encoded: fits
	if _, err := Build(o); err != nil {
		t.Errorf("18 MB attachment: %v", err)
	}
}

func TestRenderBody(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, format, in string
		html             []string // substrings the HTML must hold
		noHTML           []string // and must not
		text             string   // exact text part, when set
	}{
		{name: "text", format: "", in: "a <b>", text: "a <b>"},
		{name: "markdown raw html off", format: "markdown",
			in:     "Hi <script>alert(1)</script> <b onerror=alert(1)>\n\n<iframe src=\"https://evil\"></iframe>\n\n[x](javascript:alert(1))",
			html:   []string{"<p>Hi"},
			noHTML: []string{"<script", "onerror", "<iframe", "javascript:", "<img"}},
		{name: "markdown gfm", format: "markdown", in: "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ line\nbreak",
			html: []string{"<table>", "<td>1</td>", "<p>old line<br>"}, noHTML: []string{"<del"}, text: "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ line\nbreak"},
		{name: "html sanitized", format: "html",
			in:     `<p onclick="x()">Hello <b>there</b></p><script>steal()</script><style>p{}</style><a href="javascript:x()">j</a> <a href="https://ok.example/">ok</a><form><input></form><iframe src="https://x"></iframe>`,
			html:   []string{"<p>Hello <b>there</b></p>", `href="https://ok.example/"`},
			noHTML: []string{"onclick", "<script", "steal", "<style", "javascript:", "<form", "<input", "<iframe"},
			text:   "Hello there\n\nj ok (https://ok.example/)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustRender(t, BodyFormat(c.format), c.in)
			for _, s := range c.html {
				if !strings.Contains(p.HTML, s) {
					t.Errorf("HTML %q lacks %q", p.HTML, s)
				}
			}
			for _, s := range c.noHTML {
				if strings.Contains(strings.ToLower(p.HTML), s) {
					t.Errorf("HTML %q holds %q", p.HTML, s)
				}
			}
			if c.text != "" && p.Text != c.text {
				t.Errorf("text = %q, want %q", p.Text, c.text)
			}
			if c.format == "" && p.HTML != "" {
				t.Errorf("text body got an HTML part %q", p.HTML)
			}
		})
	}
	if _, err := RenderBody("rtf", "x"); !errors.Is(err, ErrBodyFormat) {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := RenderBody(FormatHTML, "\xff"); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

func TestForward(t *testing.T) {
	t.Parallel()
	orig := Original{
		From: "Alice <alice@example.com>", Date: "Mon, 2 Mar 2026 10:00:00 +0000",
		Subject: "Plans\r\nBcc: x@evil.com", To: "me@example.com", Text: "Line one\r\nhidden\u202eexe.pdf\n",
		Attachments: []Attachment{{Name: "plan.pdf", Data: []byte("%PDF")}},
	}
	f := Forward(orig, "FYI, see below.\n")
	want := "FYI, see below.\n\n" + ForwardHeading + "\n" +
		"From: Alice <alice@example.com>\nDate: Mon, 2 Mar 2026 10:00:00 +0000\n" +
		"Subject: Plans Bcc: x@evil.com\nTo: me@example.com\n\nLine one\nhiddenexe.pdf\n"
	if f.Body != want {
		t.Errorf("body:\n%q\nwant\n%q", f.Body, want)
	}
	if f.Subject != "Fwd: Plans Bcc: x@evil.com" {
		t.Errorf("subject %q", f.Subject)
	}
	if len(f.Attachments) != 1 || f.Attachments[0].Name != "plan.pdf" {
		t.Errorf("attachments %+v", f.Attachments)
	}
	if f := Forward(Original{Subject: "x"}, ""); !strings.HasPrefix(f.Body, ForwardHeading) {
		t.Errorf("no note: %q", f.Body)
	}

	// Built and parsed back: the forward keeps its attachments.
	raw, err := Build(Outgoing{To: mustAddr(t, "b@example.com"), Subject: f.Subject, Body: f.Body, Attachments: f.Attachments})
	if err != nil {
		t.Fatal(err)
	}
	_, mt, leaves := parseMIME(t, raw)
	if mt != "multipart/mixed" || len(leaves) != 2 || leaves[1].filename != "plan.pdf" || string(leaves[1].body) != "%PDF" {
		t.Errorf("forward structure %s %+v", mt, leaves)
	}

	for in, want := range map[string]string{
		"Hello": "Fwd: Hello", "Fwd: Hello": "Fwd: Hello", "FWD: x": "FWD: x", "fw: x": "fw: x",
		"Fw:x": "Fw:x", "  Fwd:  x ": "Fwd:  x", "": "Fwd:", "Re: x": "Fwd: Re: x", "Fwdx": "Fwd: Fwdx",
	} {
		if got := ForwardSubject(in); got != want {
			t.Errorf("ForwardSubject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	base := Outgoing{To: mustAddr(t, "a@example.com"), Subject: "s", Body: "hello\n", HTML: "<p>hello</p>",
		Attachments: []Attachment{{Name: "a.txt", Data: []byte("one")}, {Name: "b.bin", Data: []byte{1, 2}}}}
	d0, err := Digest(base)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("one"))
	if len(d0.Attachments) != 2 || d0.Attachments[0].Size != 3 || d0.Attachments[0].SHA256 != hexOf(sum[:]) ||
		d0.Attachments[0].ContentType != "text/plain; charset=utf-8" || d0.HTMLSHA256 == "" {
		t.Fatalf("digest %+v", d0)
	}
	same := base
	same.Body = "hello\r\n" // goes out the same
	same.Boundary = "other"
	if d, _ := Digest(same); d.SHA256 != d0.SHA256 {
		t.Error("CRLF body or boundary changed the digest")
	}
	for name, edit := range map[string]func(*Outgoing){
		"text":    func(o *Outgoing) { o.Body = "hello!\n" },
		"html":    func(o *Outgoing) { o.HTML = "<p>hello!</p>" },
		"no html": func(o *Outgoing) { o.HTML = "" },
		"att bytes": func(o *Outgoing) {
			o.Attachments = []Attachment{{Name: "a.txt", Data: []byte("two")}, o.Attachments[1]}
		},
		"att name": func(o *Outgoing) {
			o.Attachments = []Attachment{{Name: "c.txt", Data: []byte("one")}, o.Attachments[1]}
		},
		"att type": func(o *Outgoing) {
			o.Attachments = []Attachment{{Name: "a.txt", ContentType: "text/csv", Data: []byte("one")}, o.Attachments[1]}
		},
		"att added":   func(o *Outgoing) { o.Attachments = append(o.Attachments, Attachment{Name: "d", Data: nil}) },
		"att removed": func(o *Outgoing) { o.Attachments = o.Attachments[:1] },
		"att order":   func(o *Outgoing) { o.Attachments = []Attachment{o.Attachments[1], o.Attachments[0]} },
	} {
		o := base
		edit(&o)
		if d, err := Digest(o); err != nil || d.SHA256 == d0.SHA256 {
			t.Errorf("%s: digest unchanged (%v)", name, err)
		}
	}
}

func hexOf(b []byte) string {
	const h = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, h[c>>4], h[c&15])
	}
	return string(out)
}

// FuzzAttachmentName: any name (a stranger's, in a forward) goes out
// sanitized and reads back, through mime/multipart's RFC 2231 filename*
// and the RFC 2047 name= parameter alike, as exactly the sanitized name.
func FuzzAttachmentName(f *testing.F) {
	for _, s := range []string{"report.pdf", "Résumé – 2026 ☕.txt", "../../x", `a"b\c.txt`, "=?UTF-8?Q?x?=.txt",
		"a;b=c.txt", "x\r\nContent-Type: text/html", strings.Repeat("長", 100) + ".pdf", "%41.txt", "a  b\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		raw, err := Build(Outgoing{To: &mailAddrFuzz, Subject: "s", Body: "b", Boundary: "fuzz",
			Attachments: []Attachment{{Name: name, Data: []byte("x")}}})
		if err != nil {
			t.Fatalf("Build with attachment %q: %v", name, err)
		}
		_, mt, leaves := parseMIME(t, raw)
		want := SanitizeFilename(name)
		if mt != "multipart/mixed" || len(leaves) != 2 || leaves[1].filename != want || string(leaves[1].body) != "x" {
			t.Fatalf("%q: read back %s %+v, want filename %q", name, mt, leaves, want)
		}
		if n, err := wordDec.DecodeHeader(leaves[1].params["name"]); err != nil || n != want {
			t.Fatalf("%q: name=%q decodes to %q, %v", name, leaves[1].params["name"], n, err)
		}
	})
}
