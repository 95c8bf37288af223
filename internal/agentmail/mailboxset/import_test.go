package mailboxset

import (
	"strings"
	"testing"
)

func TestParseMailboxMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		err  string // "" = valid
	}{
		{`{"id":"aB3dE5gH","from":"alice","to":"bob","message":"hi","read_flag":false,"created_at":"2026-01-14T10:00:00Z"}`, ""},
		{`{"id":"aB3dE5gH","from":"alice","message":"no to, no time"}`, ""},
		{`{"id":"","from":"alice","to":"bob","message":"hi"}`, "message id"},
		{`{"id":"x","from":"","to":"bob","message":"hi"}`, "from: empty name"},
		{`{"id":"x","from":"a/b","to":"bob","message":"hi"}`, "slash"},
		{`{"id":"x","from":"a","to":"bob","message":"hi","created_at":"yesterday"}`, "not a mailbox message"},
		{`{"id":"x","from":"a","to":"bob"} {"id":"y"}`, "more than one JSON value"},
		{`[1,2]`, "not a mailbox message"},
	}
	for _, c := range cases {
		_, err := ParseMessage([]byte(c.line))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseMessage(%s) = %v, want %q", c.line, err, c.err)
		}
	}
	if _, err := ParseRecipient([]byte(`{"recipient":"bob","status":"busy"}`)); err == nil || !strings.Contains(err.Error(), "not ready, work or offline") {
		t.Errorf("recipient with status busy: %v", err)
	}
}

// FuzzParseMailboxLine: lines of an imported .agentmail/ directory (written
// by another program, or by hand) never panic, and what parses is usable.
func FuzzParseMailboxLine(f *testing.F) {
	for _, seed := range []string{
		`{"id":"aB3dE5gH","from":"alice","to":"bob","message":"hi","read_flag":true,"created_at":"2026-01-14T10:00:00.123456789Z"}`,
		`{"recipient":"bob","status":"ready","updated_at":"2026-01-14T10:00:00Z","notified_at":"0001-01-01T00:00:00Z","last_read_at":1}`,
		`{"id":"x","from":"\u0000","to":""}`, `{}`, `null`, `{"id":1}`, "{\"id\":\"a\",\"from\":\"b\",\"message\":\"\\ud800\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if m, err := ParseMessage(line); err == nil {
			if strings.TrimSpace(m.ID) == "" || validMailboxName(m.From) != nil {
				t.Fatalf("accepted %q as %+v", line, m)
			}
			_ = subject(m.Message)
		}
		if r, err := ParseRecipient(line); err == nil && validMailboxName(r.Recipient) != nil {
			t.Fatalf("accepted recipient %q", line)
		}
	})
}

// TestMailboxCheckMessage: the 64 KiB limit is on bytes, inclusive.
func TestMailboxCheckMessage(t *testing.T) {
	t.Parallel()
	if err := CheckMessage(string(make([]byte, MaxBytes))); err != nil {
		t.Fatalf("65536 bytes refused: %v", err)
	}
	if err := CheckMessage(string(make([]byte, MaxBytes+1))); err == nil {
		t.Fatal("65537 bytes accepted")
	}
	if err := CheckMessage(""); err == nil || err.Error() != "no message provided" {
		t.Fatalf("empty message: %v", err)
	}
}
