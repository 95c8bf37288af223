package mailmsg

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	send := func(edit func(*Input)) Input {
		in := Input{To: []string{"a@example.com"}, Subject: "Hello", Body: "Hi.\n"}
		edit(&in)
		return in
	}
	reply := func(edit func(*Input)) Input {
		in := Input{Reply: true, ThreadID: "18d5a3b2c1d0e0f1", MessageID: "18d5a3b2c1d0e0f2", Body: "Yes.\n"}
		edit(&in)
		return in
	}
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%d@example.com", i)
		}
		return out
	}
	tests := []struct {
		name  string
		in    Input
		field string // "" = valid
		text  string // the whole error text, when pinned
	}{
		{"send", send(func(*Input) {}), "", ""},
		{"body at the limit", send(func(in *Input) { in.Body = strings.Repeat("a", MaxBodyBytes) }), "", ""},
		{"subject at the limit", send(func(in *Input) { in.Subject = strings.Repeat("s", MaxSubjectBytes) }), "", ""},
		{"tab and CRLF in the body", send(func(in *Input) { in.Body = "a\tb\r\nc\rd" }), "", ""},
		{"50 recipients in all", send(func(in *Input) { in.To, in.Cc, in.Bcc = many(20), many(20), many(10) }), "", ""},
		{"reply", reply(func(*Input) {}), "", ""},
		{"reply ids trimmed", reply(func(in *Input) { in.ThreadID = " 18d5 " }), "", ""},
		{"reply id at the limit", reply(func(in *Input) { in.MessageID = strings.Repeat("a", MaxIDBytes) }), "", ""},

		{"body over the limit", send(func(in *Input) { in.Body = strings.Repeat("a", MaxBodyBytes+1) }), "body", "body is larger than 524288 bytes"},
		{"subject over the limit", send(func(in *Input) { in.Subject = strings.Repeat("s", MaxSubjectBytes+1) }), "subject", "subject is longer than 998 bytes"},
		{"subject CRLF", send(func(in *Input) { in.Subject = "hi\r\nBcc: e@x.com" }), "subject", "Invalid subject: line breaks and NUL characters are not allowed"},
		{"subject control", send(func(in *Input) { in.Subject = "hi\x01" }), "subject", "Invalid subject: line breaks or control characters"},
		{"body NUL", send(func(in *Input) { in.Body = "a\x00b" }), "body", "Invalid body: control characters other than tab and line breaks"},
		{"body invalid UTF-8", send(func(in *Input) { in.Body = "a\xffb" }), "body", "subject and body must be valid UTF-8"},
		{"subject invalid UTF-8", send(func(in *Input) { in.Subject = "a\xffb" }), "subject", "subject and body must be valid UTF-8"},
		{"not an address", send(func(in *Input) { in.To = []string{"not-an-email"} }), "to", "Invalid email address format: not-an-email"},
		{"two in one", send(func(in *Input) { in.To = []string{"a@x.com, b@y.com"} }), "to", "Invalid email address format: a@x.com, b@y.com"},
		{"bad cc", send(func(in *Input) { in.Cc = []string{"a@x.com\r\nBcc: e@y.com"} }), "cc", ""},
		{"bad bcc", send(func(in *Input) { in.Bcc = []string{"team: a@x.com;"} }), "bcc", ""},
		{"no recipient", send(func(in *Input) { in.To = nil }), "to", "at least one recipient is required"},
		{"51 recipients", send(func(in *Input) { in.To, in.Bcc = many(50), many(1) }), "recipients", "too many recipients: 51, at most 50 in all (to, cc and bcc)"},
		{"reply without thread", reply(func(in *Input) { in.ThreadID = " " }), "thread_id", "thread_id and message_id are both required"},
		{"reply without message", reply(func(in *Input) { in.MessageID = "" }), "thread_id", "thread_id and message_id are both required"},
		{"reply thread CRLF", reply(func(in *Input) { in.ThreadID = "t\r\n" }), "thread_id", `invalid thread_id "t\r\n"`},
		{"reply message with a space", reply(func(in *Input) { in.MessageID = "a b" }), "message_id", `invalid message_id "a b"`},
		{"reply id over the limit", reply(func(in *Input) { in.ThreadID = strings.Repeat("a", MaxIDBytes+1) }), "thread_id", ""},
		{"reply body over the limit", reply(func(in *Input) { in.Body = strings.Repeat("a", MaxBodyBytes+1) }), "body", "body is larger than 524288 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Validate(tt.in)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := len(e.To) + len(e.Cc) + len(e.Bcc); got != len(tt.in.To)+len(tt.in.Cc)+len(tt.in.Bcc) {
					t.Fatalf("%d recipients kept, want %d", got, len(tt.in.To)+len(tt.in.Cc)+len(tt.in.Bcc))
				}
				if tt.in.Reply && (e.ThreadID != strings.TrimSpace(tt.in.ThreadID) || e.MessageID != strings.TrimSpace(tt.in.MessageID)) {
					t.Fatalf("ids %q %q", e.ThreadID, e.MessageID)
				}
				return
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Field != tt.field {
				t.Fatalf("error %T %v, want *InvalidError on %s", err, err, tt.field)
			}
			if tt.text != "" && err.Error() != tt.text {
				t.Fatalf("text %q, want %q", err.Error(), tt.text)
			}
		})
	}
}

// FuzzValidate: whatever Validate accepts, Build can render, with no CR/LF
// left in a header value and every recipient one parsed address.
func FuzzValidate(f *testing.F) {
	for _, s := range [][4]string{
		{"a@example.com", "Hello", "Hi.\n", ""},
		{"Alice <alice@example.com>", "Ünïcødé", "a\tb\r\nc", ""},
		{"a@x.com, b@y.com", "s", "b", ""},
		{"a@example.com", "hi\r\nBcc: e@x.com", "b", ""},
		{"", "Re: x", "Yes.", "18d5a3b2c1d0e0f1"},
		{"", "", "a\x00b", "t\r\n"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, to, subject, body, thread string) {
		in := Input{Subject: subject, Body: body}
		if thread != "" {
			in.Reply, in.ThreadID, in.MessageID = true, thread, thread
		}
		if to != "" {
			in.To = []string{to}
		}
		e, err := Validate(in)
		if err != nil {
			var ie *InvalidError
			if !errors.As(err, &ie) || err.Error() == "" {
				t.Fatalf("error %T %q", err, err)
			}
			return
		}
		if strings.ContainsAny(subject, "\r\n\x00") || len(body) > MaxBodyBytes || len(subject) > MaxSubjectBytes {
			t.Fatalf("accepted %q / %d-byte body", subject, len(body))
		}
		if len(e.To) == 0 {
			return // a reply's recipient comes from its parent
		}
		if _, err := Build(Outgoing{To: e.To[0], Subject: e.Subject, Body: e.Body}); err != nil {
			t.Fatalf("accepted but Build refuses: %v", err)
		}
	})
}
