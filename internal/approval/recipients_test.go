package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func fullReq() Request {
	r := sendReq()
	r.ToList = []string{"Ann <ann@example.org>"}
	r.Cc = []string{"carol@example.com"}
	r.Bcc = []string{"boss@example.com"}
	r.HTMLSHA256 = strings.Repeat("ab", 32)
	r.Attachments = []Attachment{{Name: "report.pdf", Size: 12345, SHA256: strings.Repeat("cd", 32)}}
	return r
}

// TestSHA256BindsEveryRecipientAndPart: each recipient, the HTML part and
// each attachment change the hash; display names and case do not; a request
// without any of them hashes as it did before they existed.
func TestSHA256BindsEveryRecipientAndPart(t *testing.T) {
	t.Parallel()
	// The v1 hash of sendReq, as every file written before issue 17 has it.
	if got := sendReq().SHA256(); got != v1SHA256(sendReq()) {
		t.Fatalf("a plain request hashes %s, want the v1 %s", got, v1SHA256(sendReq()))
	}
	base := fullReq()
	for _, tc := range []struct {
		name string
		edit func(*Request)
		same bool
	}{
		{"bcc added", func(r *Request) { r.Bcc = append(r.Bcc, "mallory@example.com") }, false},
		{"bcc removed", func(r *Request) { r.Bcc = nil }, false},
		{"cc moved to bcc", func(r *Request) { r.Cc, r.Bcc = nil, []string{"boss@example.com", "carol@example.com"} }, false},
		{"to moved to cc", func(r *Request) { r.ToList, r.Cc = nil, []string{"ann@example.org", "carol@example.com"} }, false},
		{"the same lists again", func(r *Request) { r.Cc = []string{"carol@example.com"}; r.ToList = []string{"ann@example.org"} }, true},
		{"display name and case", func(r *Request) { r.Cc = []string{"Carol <CAROL@example.com>"} }, true},
		{"no HTML part", func(r *Request) { r.HTMLSHA256 = "" }, false},
		{"attachment content", func(r *Request) { r.Attachments[0].SHA256 = strings.Repeat("ce", 32) }, false},
		{"attachment size", func(r *Request) { r.Attachments[0].Size++ }, false},
		{"attachment name", func(r *Request) { r.Attachments[0].Name = "report2.pdf" }, false},
		{"attachment added", func(r *Request) { r.Attachments = append(r.Attachments, r.Attachments[0]) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fullReq()
			tc.edit(&r)
			if same := r.SHA256() == base.SHA256(); same != tc.same {
				t.Fatalf("same hash = %v, want %v", same, tc.same)
			}
		})
	}
}

// v1SHA256 is the request hash as it was defined before lists existed,
// written out again from its documentation.
func v1SHA256(r Request) string {
	h := sha256.New()
	h.Write([]byte("mailgate-request-v1\n"))
	to, _ := parseSingleAddress(r.To)
	for _, f := range [][2]string{{"kind", string(r.Kind)}, {"to", strings.ToLower(to)}, {"thread_id", r.ThreadID},
		{"message_id", r.MessageID}, {"subject", r.Subject}, {"body", normalizeNewlines(r.Body)}} {
		fmt.Fprintf(h, "%s %d\n%s\n", f[0], len(f[1]), f[1])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// setList replaces a frontmatter key and its block list, as a human in an
// editor would.
func setList(t *testing.T, path, key, value string) {
	t.Helper()
	data := readFile(t, path)
	out := regexp.MustCompile(`(?m)^`+key+`:\n(?:  - .*\n)*`).ReplaceAllString(data, key+": "+value+"\n")
	if out == data {
		t.Fatalf("no %s list in %s", key, path)
	}
	writeFile(t, path, out)
}

// TestRequestFileListsEveryRecipientAndAttachment: the file shows each
// recipient and attachment, reads back, and its approval is found; a
// recipient the human adds or removes is refused for good.
func TestRequestFileListsEveryRecipientAndAttachment(t *testing.T) {
	t.Parallel()
	withAndWithoutLedger(t, func(t *testing.T, o Options) {
		v, _ := newVault(t, o)
		req := fullReq()
		name := pending(t, v, req)
		data := readFile(t, v.path(DirPending, name))
		for _, want := range []string{
			"to:\n  - \"John <john@example.com>\"\n  - \"Ann <ann@example.org>\"\n",
			"cc:\n  - \"carol@example.com\"\n", "bcc:\n  - \"boss@example.com\"\n",
			"html_sha256: " + req.HTMLSHA256 + "\n",
			"attachments:\n  - \"report.pdf (12.3 KB, 12345 bytes, sha256 " + req.Attachments[0].SHA256 + ")\"\n",
			"- Bcc: boss@example.com (blind copy", "**An HTML part goes too", "- report.pdf (12.3 KB",
		} {
			if !strings.Contains(data, want) {
				t.Fatalf("request file lacks %q:\n%s", want, data)
			}
		}
		move(t, v, DirPending, DirApproved, name)
		a := mustFind(t, v, req)
		if !a.Final.Same(req) {
			t.Fatal("the approval's final request is not the request")
		}
	})
	for _, tc := range []struct{ name, key, value string }{
		{"bcc removed by the human", "bcc", `[]`},
		{"cc added by the human", "cc", `["carol@example.com", "eve@example.com"]`},
		{"attachment list edited", "attachments", `["report.pdf"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := newVault(t, Options{Ledger: newLedger(t)})
			req := fullReq()
			name := pending(t, v, req)
			setList(t, v.path(DirPending, name), tc.key, tc.value)
			move(t, v, DirPending, DirApproved, name)
			_, err := v.Find(context.Background(), req)
			var re *RejectedError
			if !errors.As(err, &re) || !re.Refused {
				t.Fatalf("Find = %v, want a refusal", err)
			}
		})
	}
}

// TestOldRequestFileStillMatches: a file of the format before lists (one
// `to:`, no cc/bcc) is found for the same request.
func TestOldRequestFileStillMatches(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	req := sendReq()
	old := "---\ntype: email_send\nstatus: pending\nrequest_id: x-1\nto: \"John <john@example.com>\"\nsubject: \"Meeting notes\"\n" +
		"created: 2026-02-14T09:00:00Z\nexpires: 2099-01-01T00:00:00Z\ncontent_sha256: " + v1SHA256(req) + "\nformat: mailgate-request-v2\n---\n\n" +
		BodyMarker + "\n\n" + req.Body
	writeFile(t, v.path(DirApproved, "2026-02-14_john_meeting-notes_"+nameID(req.SHA256())+".md"), old)
	mustFind(t, v, req)
}

func TestValidateRecipientsAndForward(t *testing.T) {
	t.Parallel()
	r := fullReq()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	r.Bcc = []string{"a@example.com\r\nX: y"}
	if err := r.Validate(); err == nil {
		t.Fatal("CR/LF in a bcc accepted")
	}
	r = fullReq()
	r.Cc = make([]string, 50)
	for i := range r.Cc {
		r.Cc[i] = "c@example.com"
	}
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "too many recipients") {
		t.Fatalf("51 recipients: %v", err)
	}
	f := Request{Kind: KindForward, MessageID: "18d5a3b2c1d0e0f2", ToList: []string{"a@example.com"}, Subject: "Fwd: x", Body: "b"}
	if err := f.Validate(); err != nil || f.Address() != "a@example.com" {
		t.Fatalf("forward: %v %q", err, f.Address())
	}
	f.ToList = nil
	if err := f.Validate(); err == nil {
		t.Fatal("a forward to nobody accepted")
	}
	f = Request{Kind: KindForward, MessageID: "bad id", ToList: []string{"a@example.com"}}
	if err := f.Validate(); err == nil {
		t.Fatal("a forward of a malformed id accepted")
	}
}

// FuzzRequestListsRoundTrip: a valid request with recipient lists and an
// attachment renders to a file that parses back to the same lists and
// matches itself.
func FuzzRequestListsRoundTrip(f *testing.F) {
	f.Add("Ann <ann@example.org>", "carol@example.com", "boss@example.com", "report.pdf")
	f.Add("a@b.c", "\"Doe, J\" <j@x.y>", "", "naïve \"quoted\" - name.txt")
	f.Fuzz(func(t *testing.T, to2, cc, bcc, att string) {
		req := sendReq()
		for _, p := range []struct {
			v    string
			list *[]string
		}{{to2, &req.ToList}, {cc, &req.Cc}, {bcc, &req.Bcc}} {
			if p.v != "" {
				*p.list = []string{p.v}
			}
		}
		if att != "" {
			req.Attachments = []Attachment{{Name: att, Size: int64(len(att)), SHA256: strings.Repeat("0a", 32)}}
		}
		if req.Validate() != nil {
			return
		}
		renderedMatches(t, req)
	})
}

// TestRecipientModeBindsEveryRecipient: the contract's hand-written file
// names one `to`; a call adding a cc or bcc does not match it.
func TestRecipientModeBindsEveryRecipient(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{Mode: ModeRecipient})
	writeFile(t, v.path(DirApproved, "hand.md"), "---\ntype: email_send\nstatus: approved\nto: john@example.com\n---\n\nanything\n")
	req := sendReq()
	mustFind(t, v, req)
	for _, edit := range []func(*Request){
		func(r *Request) { r.Bcc = []string{"mallory@example.com"} },
		func(r *Request) { r.Cc = []string{"mallory@example.com"} },
		func(r *Request) { r.ToList = []string{"mallory@example.com"} },
	} {
		r := sendReq()
		edit(&r)
		if _, err := v.Find(context.Background(), r); !errors.Is(err, ErrNoApproval) {
			t.Fatalf("a call with another recipient matched the hand-written approval: %v", err)
		}
	}
}
