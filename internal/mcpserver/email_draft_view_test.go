package mcpserver

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseDraft(t *testing.T) {
	t.Parallel()
	v, err := parseDraft(draftRaw("=?utf-8?q?Plan_f=C3=BCr_Q3?=", "Dave <dave@example.com>"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Subject != "Plan für Q3" || strings.Join(v.To, "|") != "Alice <alice@example.com>|bob@example.org" ||
		strings.Join(v.Bcc, "|") != "Dave <dave@example.com>" || v.HTMLSHA256 == "" || v.Text != "Hello all,\r\nthe plan is attached." ||
		len(v.Attachments) != 1 || v.Attachments[0].Name != "notes.txt" || v.Attachments[0].Size != len(draftNote) {
		t.Fatalf("%+v", v)
	}
	// A header a human cannot see whole is shown with its hidden characters.
	v, _ = parseDraft([]byte("To: a@example.com\r\nSubject: =?utf-8?q?Pay_=E2=80=AEnow?=\r\n\r\nx"))
	if !strings.Contains(v.Subject, "⟨U+202E") {
		t.Fatalf("subject %q", v.Subject)
	}
	// Odd structure is shown as far as it goes, never an error.
	v, err = parseDraft([]byte("To: a@example.com\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\ncut"))
	if err != nil || len(v.Unreadable) == 0 || !strings.Contains(v.describe("r1", "m1"), "Not shown: a multipart/mixed part ends early") {
		t.Fatalf("%v %+v", err, v)
	}
}

func TestDraftDescribeBoundsText(t *testing.T) {
	t.Parallel()
	v, _ := parseDraft([]byte("To: a@example.com\r\n\r\n" + strings.Repeat("é", maxDraftTextView)))
	d := v.describe("r1", "m1")
	if len(d) > maxDraftTextView+4096 || !utf8.ValidString(d) || !strings.Contains(d, "[… the text goes on for ") {
		t.Fatalf("description of %d bytes", len(d))
	}
}

// FuzzParseDraft: whatever a draft holds (anyone with the mailbox wrote
// it), parsing never panics and the description is valid UTF-8 within the
// request's bounds.
func FuzzParseDraft(f *testing.F) {
	f.Add(draftRaw("Plan", "d@example.com"))
	f.Add([]byte("To: a@example.com\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: multipart/alternative; boundary=C\r\n\r\n--C\r\n\r\nx\r\n--C--\r\n--B--\r\n"))
	f.Add([]byte("To: =?utf-8?b?w6k=?= <a@b.c>\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!"))
	f.Add([]byte("Subject: a\r\n\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := parseDraft(raw)
		if err != nil {
			return
		}
		d := v.describe("r1", "m1")
		if !utf8.ValidString(d) || !utf8.ValidString(v.Subject) || strings.ContainsAny(v.Subject, "\r\n") {
			t.Fatalf("description not valid UTF-8 or subject on two lines: %q", v.Subject)
		}
	})
}
