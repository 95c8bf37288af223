package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestOriginalKeptBesideTheRequest: the message a reply answers is kept
// under the hash of its file, named by the request file (with a line in
// its notes), and read back exactly, fences and hidden characters in its
// text included; it does not change the approval hash; a kept file that
// no longer matches its hash is not shown.
func TestOriginalKeptBesideTheRequest(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	orig := &Original{MessageID: "18d5a3b2c1d0e0f2", From: "Ann <ann@example.org>", Date: "Mon, 9 Feb 2026 09:00:00 +0100",
		Subject: "Budget", To: "me@example.com", Cc: "Bob <bob@example.org>",
		Text:        "Can we agree on 10k?\n```\nnot a fence end\n````\nHidden\u200bword, ![pixel](https://tracker.example/p.png)\n",
		Attachments: []OriginalFile{{Name: "budget (v2).xlsx", Size: 12345}, {Name: "note.txt", Size: 3}}}
	req := replyReq()
	plain := req.SHA256()
	req.Original = orig
	if req.SHA256() != plain {
		t.Fatal("the original changes the approval hash")
	}
	p, err := v.Request(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := v.Resolve(p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !isHex(it.OriginalSHA256) {
		t.Fatalf("original_sha256 = %q", it.OriginalSHA256)
	}
	file := readFile(t, p.Path)
	if !strings.Contains(file, `**Answering** the message from Ann <ann@example.org> of Mon, 9 Feb 2026 09:00:00 +0100, subject “Budget” (kept as it was: Logs/originals/`+it.OriginalSHA256+".md") {
		t.Errorf("the request's notes do not name the original:\n%s", file)
	}
	got, err := v.Original(it)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, orig) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, orig)
	}
	// The kept file shows the sender's text as text (a fence longer than
	// any in it), so a Markdown viewer fetches nothing it names.
	kept := readFile(t, filepath.Join(v.Root(), DirLogs, DirOriginals, it.OriginalSHA256+".md"))
	if !strings.Contains(kept, "`````text\nCan we agree") {
		t.Errorf("kept file:\n%s", kept)
	}
	// Changed by anyone: not shown.
	if err := os.WriteFile(filepath.Join(v.Root(), DirLogs, DirOriginals, it.OriginalSHA256+".md"), []byte(strings.Replace(kept, "10k", "100k", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Original(it); !errors.Is(err, ErrNoOriginal) {
		t.Fatalf("a changed copy: %v, want ErrNoOriginal", err)
	}
	// A send keeps none.
	p2, err := v.Request(context.Background(), Request{Kind: KindSend, To: "x@example.com", Subject: "s", Body: "b", Original: orig}, nil)
	if err != nil {
		t.Fatal(err)
	}
	it2, _ := v.Resolve(p2.Name)
	if _, err := v.Original(it2); !errors.Is(err, ErrNoOriginal) || strings.Contains(readFile(t, p2.Path), "original_sha256") {
		t.Fatalf("a send kept an original: %v", err)
	}
}

// TestOriginalTextBounded: a long text is cut (on a rune boundary) and
// said to be.
func TestOriginalTextBounded(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	req := replyReq()
	req.Original = &Original{MessageID: "m", From: "a@example.org", Text: strings.Repeat("é", maxOriginalText)}
	p, err := v.Request(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := v.Resolve(p.Name)
	got, err := v.Original(it)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || len(got.Text) > maxOriginalText+1 || !strings.HasPrefix(req.Original.Text, strings.TrimSuffix(got.Text, "\n")) {
		t.Fatalf("truncated %v, %d bytes", got.Truncated, len(got.Text))
	}
}

// FuzzOriginalRoundTrip: whatever a sender wrote (headers, text with
// fences, control characters, invalid UTF-8), the kept copy reads back as
// kept: the text block cannot be closed early by the sender's text.
func FuzzOriginalRoundTrip(f *testing.F) {
	f.Add("Ann <ann@example.org>", "Budget", "Can we agree?\n```\nx\n~~~\n", "a.pdf")
	f.Add("\"x\" <y@z>", "\u202e\x00", "````text\n````\r\nend", "")
	f.Fuzz(func(t *testing.T, from, subject, text, file string) {
		if len(text) > maxOriginalText {
			t.Skip()
		}
		v, _ := newVault(t, Options{})
		o := &Original{MessageID: "m1", From: from, Subject: subject, Text: text}
		if file != "" {
			o.Attachments = []OriginalFile{{Name: file, Size: 7}}
		}
		sha := v.keepOriginal(KindForward, o)
		if sha == "" {
			t.Fatal("not kept")
		}
		got, err := v.Original(&Item{OriginalSHA256: sha})
		if err != nil {
			t.Fatal(err)
		}
		valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
		wantText := strings.TrimSuffix(valid(normalizeNewlines(text)), "\n")
		if got.From != valid(from) || got.Subject != valid(subject) || strings.TrimSuffix(got.Text, "\n") != wantText {
			t.Fatalf("read back %+v", got)
		}
		if file != "" && (len(got.Attachments) != 1 || got.Attachments[0].Name != valid(file) || got.Attachments[0].Size != 7) {
			t.Fatalf("attachments %+v", got.Attachments)
		}
	})
}

// TestOriginalShownAfterTheSend: the Done file of a reply still names the
// message it answered, so the approval page shows it on the record too.
// (Record wrote its own original_sha256, the request's content hash, over
// the kept original's name: the page said the original was not kept.)
func TestOriginalShownAfterTheSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, scheduled := range []bool{false, true} {
		v, _ := newVault(t, Options{})
		req := replyReq()
		req.Original = &Original{MessageID: "18d5a3b2c1d0e0f2", From: "Ann <ann@example.org>", Subject: "Budget", Text: "Can we agree on 10k?\n"}
		requestAndApprove(t, v, req)
		c, err := v.Claim(ctx, mustFind(t, v, req))
		if err != nil {
			t.Fatal(err)
		}
		if scheduled {
			if err := c.RecordScheduled(time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Record(Outcome{Status: StatusSent, SentAt: time.Now(), GmailMessageID: "m1"}); err != nil {
			t.Fatal(err)
		}
		it, err := v.Resolve(c.Name, DirDone)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Original(it)
		if err != nil {
			t.Fatalf("scheduled %v: the Done file's original: %v\n%s", scheduled, err, readFile(t, c.Path))
		}
		if got.Subject != "Budget" {
			t.Fatalf("scheduled %v: read back %+v", scheduled, got)
		}
	}
}
