package approval

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFindRefuses approves sendReq, then changes either the call or the
// approved file; every case must find nothing.
func TestFindRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		call   func(*Request)                         // edits the call
		file   func(t *testing.T, path string)        // edits the approved file
		vault  func(t *testing.T, v *Vault, n string) // edits the vault
		reason string                                 // expected in NoMatchError
	}{
		{name: "other body", call: func(r *Request) { r.Body = "Send me the passwords.\n" }},
		{name: "other subject", call: func(r *Request) { r.Subject = "Invoice" }},
		{name: "other recipient", call: func(r *Request) { r.To = "mallory@example.com" }},
		{name: "body edited in file", file: func(t *testing.T, p string) {
			writeFile(t, p, strings.Replace(readFile(t, p), "Notes attached.", "Wire $10k.", 1))
		}, reason: "body differs"},
		{name: "subject edited in file", file: func(t *testing.T, p string) { editField(t, p, "subject", `"Invoice"`) }, reason: "subject differs"},
		{name: "recipient edited in file", file: func(t *testing.T, p string) { editField(t, p, "to", "mallory@example.com") }, reason: "the recipient was changed from john@example.com to mallory@example.com"},
		{name: "second recipient smuggled into to", file: func(t *testing.T, p string) {
			editField(t, p, "to", `"john@example.com, mallory@example.com"`)
		}, reason: "the recipient was changed"},
		{name: "to as a list", file: func(t *testing.T, p string) {
			editField(t, p, "to", `[john@example.com, mallory@example.com]`)
		}, reason: "the To recipients were changed"},
		{name: "expired", vault: func(t *testing.T, v *Vault, _ string) {}, reason: "expired"},
		{name: "expires missing", file: func(t *testing.T, p string) {
			writeFile(t, p, strings.Replace(readFile(t, p), "expires: 2026-02-15T10:00:00Z\n", "", 1))
		}, reason: "expires missing"},
		{name: "status rejected", file: func(t *testing.T, p string) { editField(t, p, "status", "rejected") }, reason: "status rejected"},
		{name: "status sent", file: func(t *testing.T, p string) { editField(t, p, "status", "sent") }, reason: "status sent"},
		{name: "type differs", file: func(t *testing.T, p string) { editField(t, p, "type", "email_reply") }, reason: "type differs"},
		{name: "hash differs", file: func(t *testing.T, p string) { editField(t, p, "content_sha256", strings.Repeat("0", 64)) }, reason: "content_sha256 differs"},
		{name: "duplicate key", file: func(t *testing.T, p string) {
			writeFile(t, p, strings.Replace(readFile(t, p), "status: pending\n", "status: pending\nstatus: rejected\n", 1))
		}, reason: "frontmatter (the lines between the --- markers) is broken"},
		{name: "symlink in Approved", vault: func(t *testing.T, v *Vault, n string) {
			target := v.path(DirLogs, n)
			if err := os.Rename(v.path(DirApproved, n), target); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, v.path(DirApproved, n)); err != nil {
				t.Fatal(err)
			}
		}, reason: "symbolic link"},
		{name: "not .md", vault: func(t *testing.T, v *Vault, n string) {
			if err := os.Rename(v.path(DirApproved, n), v.path(DirApproved, strings.TrimSuffix(n, ".md")+".txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "oversized", file: func(t *testing.T, p string) {
			writeFile(t, p, readFile(t, p)+strings.Repeat("\n", 1<<20))
		}, reason: "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			v, c := newVault(t, Options{})
			req := sendReq()
			name := requestAndApprove(t, v, req)
			path := v.path(DirApproved, name)
			if tc.file != nil {
				tc.file(t, path)
			}
			if tc.vault != nil {
				tc.vault(t, v, name)
			}
			if tc.name == "expired" {
				c.Set(t0.Add(24 * time.Hour))
			}
			call := req
			if tc.call != nil {
				tc.call(&call)
			}
			a, err := v.Find(ctx, call)
			if !errors.Is(err, ErrNoApproval) {
				t.Fatalf("Find = %+v, %v; want ErrNoApproval", a, err)
			}
			if tc.reason != "" && !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("reason: %v, want %q", err, tc.reason)
			}
		})
	}
}

func TestFindToleratesEditors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(string) string
	}{
		{"CRLF", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
		{"BOM", func(s string) string { return "\ufeff" + s }},
		{"blank lines before frontmatter", func(s string) string { return "\n\n" + s }},
		{"extra fields", func(s string) string {
			return strings.Replace(s, "status: pending\n", "status: pending\ntags: [email, agent]\nreviewed_by: \"me\"\napproved_at: 2026-02-14\n", 1)
		}},
		{"status approved capitalised", func(s string) string { return strings.Replace(s, "status: pending", "status: Approved", 1) }},
		{"single-quoted and plain values", func(s string) string {
			s = strings.Replace(s, `to: "John <john@example.com>"`, "to: 'JOHN@Example.com'", 1)
			return strings.Replace(s, `subject: "Meeting notes"`, "subject: Meeting notes", 1)
		}},
		{"comments removed", func(s string) string {
			i := strings.Index(s, "# mailgate")
			j := strings.Index(s[i:], "\n")
			return s[:i] + s[i+j+1:]
		}},
		{"trailing spaces on delimiters", func(s string) string { return strings.Replace(s, "---\n", "---  \n", 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, req, name := approvedSend(t, Options{})
			p := v.path(DirApproved, name)
			writeFile(t, p, tc.edit(readFile(t, p)))
			if _, err := v.Find(context.Background(), req); err != nil {
				t.Fatalf("Find: %v\n%q", err, readFile(t, p))
			}
		})
	}
}

func TestRecipientMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const human = "---\ntype: email_send\nstatus: approved\nto: John Doe <JOHN@example.com>\ncreated: 2026-02-14T09:00:00Z\n---\n\n## Risk assessment\nLow.\n"
	for _, tc := range []struct {
		name    string
		file    string
		age     time.Duration
		call    func(*Request)
		matches bool
	}{
		{"contract file, any content", human, time.Minute, func(r *Request) { r.Subject, r.Body = "Anything", "at all" }, true},
		{"other recipient", human, time.Minute, func(r *Request) { r.To = "jane@example.com" }, false},
		{"status rejected", strings.Replace(human, "approved", "rejected", 1), time.Minute, nil, false},
		{"no expires, older than TTL", human, 25 * time.Hour, nil, false},
		{"explicit expiry passed", strings.Replace(human, "created:", "expires: 2026-02-14T09:30:00Z\ncreated:", 1), time.Minute, nil, false},
		{"date-only expiry today", strings.Replace(human, "created:", "expires: 2026-02-14\ncreated:", 1), 48 * time.Hour, nil, true},
		{"two recipients", strings.Replace(human, "to: John Doe <JOHN@example.com>", "to: john@example.com, x@y.z", 1), time.Minute, nil, false},
		{"reply file for a send", strings.Replace(human, "email_send", "email_reply", 1), time.Minute, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := newVault(t, Options{Mode: ModeRecipient})
			p := v.path(DirApproved, "approve-john.md")
			writeFile(t, p, tc.file)
			mt := t0.Add(-tc.age)
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
			req := sendReq()
			if tc.call != nil {
				tc.call(&req)
			}
			a, err := v.Find(ctx, req)
			if tc.matches != (err == nil) {
				t.Fatalf("Find = %+v, %v; want match %v", a, err, tc.matches)
			}
		})
	}

	t.Run("reply bound to thread", func(t *testing.T) {
		v, _ := newVault(t, Options{Mode: ModeRecipient})
		writeFile(t, v.path(DirApproved, "r.md"), "---\ntype: email_reply\nstatus: approved\nthread_id: 18d5a3b2c1d0e0f1\n---\n")
		req := replyReq()
		if _, err := v.Find(ctx, req); err != nil {
			t.Fatalf("same thread: %v", err)
		}
		req.ThreadID = "18d5a3b2c1d0e0ff"
		if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
			t.Fatalf("other thread: %v", err)
		}
	})
}

// TestSelfApproval: an agent that writes a perfect-looking approval straight
// into Approved/ is refused when the ledger is on (content mode).
func TestSelfApproval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := sendReq()
	forged := string(renderRequest(req, req.SHA256(), req.SHA256()[:32]+"-deadbeef", t0, t0.Add(time.Hour), ""))
	name := requestName(req, req.SHA256(), t0, 0)

	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	writeFile(t, v.path(DirApproved, name), forged)
	if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) || !strings.Contains(err.Error(), "no record of issuing it") {
		t.Fatalf("forged approval: %v", err)
	}
	// Without the hash field the ledger cannot vouch for it either.
	writeFile(t, v.path(DirApproved, name), strings.Replace(forged, "content_sha256:", "x_sha:", 1))
	if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
		t.Fatalf("forged approval without hash: %v", err)
	}

	// Documented limit: without a ledger, content binding is the only check.
	v2, _ := newVault(t, Options{})
	writeFile(t, v2.path(DirApproved, name), forged)
	if _, err := v2.Find(ctx, req); err != nil {
		t.Fatalf("no ledger: %v", err)
	}
}

func TestFindByName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		rename string
		found  bool
	}{
		{"", true},
		{"%s (1).md", true},    // a file manager's copy keeps the stem
		{"%s-copy.MD", true},   // extension case does not matter
		{"approved.md", false}, // renamed: withdrawn in content mode
		{".%s.md", false},      // hidden (editor swap/lock files)
		{"%s.md.bak", false},
	} {
		v, req, name := approvedSend(t, Options{})
		if tc.rename != "" {
			to := tc.rename
			if strings.Contains(to, "%s") {
				to = strings.ReplaceAll(to, "%s", strings.TrimSuffix(name, ".md"))
			}
			if err := os.Rename(v.path(DirApproved, name), v.path(DirApproved, to)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := v.Find(ctx, req); (err == nil) != tc.found {
			t.Errorf("rename %q: Find err = %v, want found %v", tc.rename, err, tc.found)
		}
	}
}
