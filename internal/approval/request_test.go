package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := sendReq()
	for _, tc := range []struct {
		name  string
		edit  func(*Request)
		field string // "" = valid
	}{
		{"send ok", func(*Request) {}, ""},
		{"bare address", func(r *Request) { r.To = "john@example.com" }, ""},
		{"angle only", func(r *Request) { r.To = "<john@example.com>" }, ""},
		{"quoted name with comma", func(r *Request) { r.To = `"Doe, John" <john@example.com>` }, ""},
		{"empty subject", func(r *Request) { r.Subject = "" }, ""},
		{"crlf body", func(r *Request) { r.Body = "a\r\nb\r\n" }, ""},
		{"second recipient", func(r *Request) { r.To = "john@example.com, evil@attacker.io" }, "to"},
		{"second recipient semicolon", func(r *Request) { r.To = "john@example.com; evil@attacker.io" }, "to"},
		{"group", func(r *Request) { r.To = "friends: john@example.com;" }, "to"},
		{"header injection", func(r *Request) { r.To = "john@example.com\r\nBcc: evil@attacker.io" }, "to"},
		{"name looks like address", func(r *Request) { r.To = "boss@example.com <evil@attacker.io>" }, "to"},
		{"comment", func(r *Request) { r.To = "john@example.com (John)" }, "to"},
		{"encoded word", func(r *Request) { r.To = "=?utf-8?q?x?= <john@example.com>" }, "to"},
		{"not an address", func(r *Request) { r.To = "not-an-email" }, "to"},
		{"empty to", func(r *Request) { r.To = "" }, "to"},
		{"subject newline", func(r *Request) { r.Subject = "Hi\nBcc: x@y.z" }, "subject"},
		{"subject control", func(r *Request) { r.Subject = "Hi\x00" }, "subject"},
		{"body NUL", func(r *Request) { r.Body = "a\x00b" }, "body"},
		{"body invalid utf8", func(r *Request) { r.Body = "a\xffb" }, "body"},
		{"body too long", func(r *Request) { r.Body = strings.Repeat("a", mailmsg.MaxBodyBytes+1) }, "body"},
		{"unknown kind", func(r *Request) { r.Kind = "email_unknown" }, "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			err := r.Validate()
			var ve *ValidationError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.field != "" && !errors.As(err, &ve):
				t.Fatalf("err = %v, want ValidationError on %s", err, tc.field)
			case tc.field != "" && ve.Field != tc.field:
				t.Fatalf("field = %s, want %s (%v)", ve.Field, tc.field, err)
			}
		})
	}
}

func TestValidateReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		edit    func(*Request)
		wantErr bool
	}{
		{"ok", func(*Request) {}, false},
		{"no recipient", func(r *Request) { r.To = "" }, false},
		{"missing thread", func(r *Request) { r.ThreadID = "" }, true},
		{"missing message", func(r *Request) { r.MessageID = "" }, true},
		{"thread with space", func(r *Request) { r.ThreadID = "18d5 a" }, true},
		{"thread with newline", func(r *Request) { r.ThreadID = "18d5\nx" }, true},
		{"bad recipient", func(r *Request) { r.To = "a@b.c, d@e.f" }, true},
	} {
		r := replyReq()
		tc.edit(&r)
		if err := r.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", tc.name, err, tc.wantErr)
		}
	}
}

func TestValidationErrorText(t *testing.T) {
	t.Parallel()
	err := Request{Kind: KindSend, To: "not-an-email"}.Validate()
	if got := err.Error(); !strings.HasPrefix(got, "Invalid email address format: not-an-email") {
		t.Fatalf("text = %q", got)
	}
}

func TestSHA256Binding(t *testing.T) {
	t.Parallel()
	base := sendReq()
	h := base.SHA256()
	// Frozen: the serialisation is a stored format (request files, ledger);
	// this value was computed independently from the documented layout.
	if want := "7928571a0ddb56a3ee76a4bdcb94c873a9325a6d058d97520e5a29fb20da87e2"; h != want {
		t.Fatalf("SHA256 = %s, want %s", h, want)
	}
	same := []func(*Request){
		func(r *Request) { r.To = "JOHN@EXAMPLE.COM" },
		func(r *Request) { r.To = "Someone Else <john@example.com>" },
		func(r *Request) { r.Body = strings.ReplaceAll(r.Body, "\n", "\r\n") },
		func(r *Request) { r.Body = strings.ReplaceAll(r.Body, "\n", "\r") },
	}
	for i, edit := range same {
		r := base
		edit(&r)
		if r.SHA256() != h {
			t.Errorf("same-content edit %d changed the hash", i)
		}
	}
	differ := []func(*Request){
		func(r *Request) { r.To = "john@example.net" },
		func(r *Request) { r.Subject += " " },
		func(r *Request) { r.Body += "\n" },
		func(r *Request) { r.Kind = KindReply },
		// Moving bytes between fields must not collide.
		func(r *Request) { r.Subject, r.Body = r.Subject+"\nbody 1\nH", r.Body[1:] },
	}
	for i, edit := range differ {
		r := base
		edit(&r)
		if r.SHA256() == h {
			t.Errorf("content edit %d kept the hash", i)
		}
	}
	if got, want := requestName(base, h, t0, 0), "2026-02-14_john-example-com_meeting-notes_"+h[:32]+".md"; got != want {
		t.Errorf("requestName = %q, want %q", got, want)
	}
}

func TestYAMLQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "plain", `with "quotes" and \backslash\`, "null", "~", "true", "0123", "1e3",
		"  leading and trailing  ", "# not a comment", "key: value", "- item", "[x]", "{y}",
		"tab\there", "émoji 🚀 日本語", "line\u2028sep\u2029para\u0085nel", "bom\ufeffinside",
		"del\x7f", "c1\u0080\u009f", "&anchor *alias !tag", "---", "...", "%percent @at `tick`",
	} {
		data := renderFile("c", []kv{{key: "type", value: "email_send"}, {key: "subject", value: s, quoted: true}}, "")
		p, err := parseApproval(data)
		if err != nil {
			t.Errorf("%q: %v\n%s", s, err, data)
			continue
		}
		if p.Subject != s {
			t.Errorf("round trip %q -> %q", s, p.Subject)
		}
	}
}
