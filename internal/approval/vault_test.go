package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnsurePendingWritesReadableRequestOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, c := newVault(t, Options{})
	req := sendReq()
	name := pending(t, v, req)
	if want := "2026-02-14_john-example-com_meeting-notes_" + req.SHA256()[:32] + ".md"; name != want {
		t.Fatalf("name = %s, want %s", name, want)
	}
	path := v.path(DirPending, name)
	first := readFile(t, path)
	for _, want := range []string{
		"---\n# mailgate approval request: read the notes and the email below, then decide.\n",
		"\ntype: email_send\n", "\nstatus: pending\n", "\nrequest_id: " + req.SHA256()[:32] + "-",
		"\ninstructions: \"While this file is in Pending_Approval/: move it to Approved/",
		"\nformat: mailgate-request-v2\n---\n\n> [!note] No warnings",
		"\nto: \"John <john@example.com>\"\n", "\nsubject: \"Meeting notes\"\n",
		"\ncreated: 2026-02-14T10:00:00Z\n", "\nexpires: 2026-02-15T10:00:00Z\n",
		"\ncontent_sha256: " + req.SHA256() + "\n",
		"\n" + BodyMarker + "\n\n" + req.Body,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("request file lacks %q:\n%s", want, first)
		}
	}
	if !strings.HasSuffix(first, "\n"+BodyMarker+"\n\n"+req.Body) {
		t.Errorf("body is not the exact tail of the file")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi.Mode(), err)
	}

	c.Advance(time.Hour)
	again, err := v.EnsurePending(ctx, req)
	if err != nil || again != name {
		t.Fatalf("second call: %s, %v", again, err)
	}
	if readFile(t, path) != first {
		t.Fatal("request file rewritten by an identical call")
	}
	if n := len(dirNames(t, v, DirPending)); n != 1 {
		t.Fatalf("%d files in Pending_Approval/", n)
	}

	// Once expired, the request is renewed in place with a new id.
	c.Set(t0.Add(25 * time.Hour))
	if _, err := v.EnsurePending(ctx, req); err != nil {
		t.Fatal(err)
	}
	renewed := readFile(t, path)
	if renewed == first || !strings.Contains(renewed, "expires: 2026-02-16T11:00:00Z") {
		t.Fatalf("expired request not renewed:\n%s", renewed)
	}

	other := req
	other.Body += "P.S."
	if n2, _ := v.EnsurePending(ctx, other); n2 == name {
		t.Fatal("different content got the same file")
	}
}

func TestSendLifecycle(t *testing.T) {
	t.Parallel()
	withAndWithoutLedger(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		v, c := newVault(t, o)
		req := sendReq()
		if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
			t.Fatalf("before approval: %v", err)
		}
		name := requestAndApprove(t, v, req)
		a, err := v.Find(ctx, req)
		if err != nil {
			t.Fatalf("Find: %v", err)
		}
		if a.Name != name || a.ContentSHA256 != req.SHA256() || !a.Expires.Equal(t0.Add(24*time.Hour)) {
			t.Fatalf("approval = %+v", a)
		}
		approved := readFile(t, a.Path)
		cl, err := v.Claim(ctx, a)
		if err != nil {
			t.Fatalf("Claim: %v", err)
		}
		if n := len(dirNames(t, v, DirApproved)); n != 0 {
			t.Fatalf("Approved/ still has %d files", n)
		}
		if got := readFile(t, cl.Path); got != approved {
			t.Fatalf("claimed file changed by the move:\n%s", got)
		}
		c.Advance(time.Second)
		if err := cl.Record(Outcome{Status: StatusSent, SentAt: c.Now(), GmailMessageID: "m1", GmailThreadID: "t1"}); err != nil {
			t.Fatal(err)
		}
		done := readFile(t, cl.Path)
		for _, want := range []string{"\nstatus: sent\n", "\nsent_at: 2026-02-14T10:00:01Z\n",
			"\ngmail_message_id: \"m1\"\n", "\ngmail_thread_id: \"t1\"\n", "\napproval_sha256: " + a.SHA256 + "\n"} {
			if !strings.Contains(done, want) {
				t.Errorf("Done file lacks %q:\n%s", want, done)
			}
		}
		if strings.Count(done, "\nstatus:") != 1 {
			t.Errorf("status written twice:\n%s", done)
		}
		if !strings.HasSuffix(done, "\n"+BodyMarker+"\n\n"+req.Body) || !strings.Contains(done, "> [!success] Sent to john@example.com at 2026-02-14T10:00:01Z") ||
			strings.Contains(done, "Move this file") || strings.Contains(done, "move it to Approved/") {
			t.Errorf("body changed:\n%s", done)
		}

		// Reuse: the consumed approval authorises nothing, even copied back.
		if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
			t.Fatalf("after send: %v", err)
		}
		writeFile(t, v.path(DirApproved, name), done)
		if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
			t.Fatalf("Done file copied back honoured: %v", err)
		}
		if o.Ledger != nil {
			// Even with its status edited back, the ledger knows it is used.
			editField(t, v.path(DirApproved, name), "status", "pending")
			if _, err := v.Find(ctx, req); !errors.Is(err, ErrNoApproval) {
				t.Fatalf("re-statused copy honoured: %v", err)
			}
		}
		os.Remove(v.path(DirApproved, name))

		// The same email again needs a new approval, and is marked as a
		// repeat at its top and in its name, never under the Done file's.
		again := pending(t, v, req)
		if again == name || !strings.HasSuffix(again, "_repeat-2.md") {
			t.Errorf("repeat request named %q (first %q)", again, name)
		}
		got := readFile(t, v.path(DirPending, again))
		top := got[strings.Index(got, "\n---\n\n")+6:]
		if !strings.HasPrefix(top, "> [!danger] REPEAT: this exact email was already sent at 2026-02-14T10:00:01Z (Done/"+cl.Name+")") ||
			!strings.Contains(got, "  - \"REPEAT: this exact email was already sent") {
			t.Errorf("new request not marked as a repeat at its top:\n%s", got)
		}
	})
}

func TestReplyBoundToThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{})
	req := replyReq()
	name := requestAndApprove(t, v, req)
	if got := readFile(t, v.path(DirApproved, name)); !strings.Contains(got, "\nthread_id: \"18d5a3b2c1d0e0f1\"\n") ||
		!strings.Contains(got, "\nmessage_id: \"18d5a3b2c1d0e0f2\"\n") || !strings.Contains(got, "\ntype: email_reply\n") {
		t.Fatalf("reply request:\n%s", got)
	}
	for _, tc := range []struct {
		name string
		edit func(*Request)
	}{
		{"other thread", func(r *Request) { r.ThreadID = "18d5a3b2c1d0e0ff" }},
		{"other message", func(r *Request) { r.MessageID = "18d5a3b2c1d0e0ff" }},
		{"other recipient", func(r *Request) { r.To = "mallory@example.org" }},
		{"other body", func(r *Request) { r.Body = "Disagree.\n" }},
		{"as a send", func(r *Request) { r.Kind = KindSend }},
	} {
		r := req
		tc.edit(&r)
		if a, err := v.Find(ctx, r); !errors.Is(err, ErrNoApproval) {
			t.Errorf("%s: Find = %v, %v", tc.name, a, err)
		}
	}
	if _, err := v.Find(ctx, req); err != nil {
		t.Fatalf("exact reply: %v", err)
	}
}

func TestRejectedFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{})
	req := sendReq()
	name := pending(t, v, req)
	move(t, v, DirPending, DirRejected, name)
	_, err := v.Find(ctx, req)
	var re *RejectedError
	if !errors.Is(err, ErrRejected) || !errors.As(err, &re) || re.Name != name {
		t.Fatalf("Find = %v, want RejectedError for %s", err, name)
	}
	// Rejected wins even over a copy in Approved/.
	writeFile(t, v.path(DirApproved, name), readFile(t, v.path(DirRejected, name)))
	if _, err := v.Find(ctx, req); !errors.Is(err, ErrRejected) {
		t.Fatalf("with an approved copy: %v", err)
	}
	other := req
	other.Subject = "Different"
	if _, err := v.Find(ctx, other); !errors.Is(err, ErrNoApproval) {
		t.Fatalf("different content: %v", err)
	}
}

func TestDevLog(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	req := sendReq()
	path, err := v.DevLog(req, "approval: none; limit: ok")
	if err != nil {
		t.Fatal(err)
	}
	wantDir := filepath.Join(v.Root(), DirLogs, "dev_mode", "2026-02-14")
	if filepath.Dir(path) != wantDir {
		t.Fatalf("path = %s", path)
	}
	got := readFile(t, path)
	for _, want := range []string{"NOT sent", "\nstatus: dev_mode\n", "\nnote: \"approval: none; limit: ok\"\n", "\n---\n\n" + req.Body} {
		if !strings.Contains(got, want) {
			t.Errorf("dev log lacks %q:\n%s", want, got)
		}
	}
	if names := dirNames(t, v, DirPending); len(names) != 0 {
		t.Fatalf("DevLog wrote a request: %v", names)
	}
}

func TestOpenOptions(t *testing.T) {
	t.Parallel()
	if _, err := Open("relative/vault", Options{}); err == nil {
		t.Error("relative root accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "v"), Options{Mode: "loose"}); err == nil {
		t.Error("unknown mode accepted")
	}
	v, _ := newVault(t, Options{})
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		fi, err := os.Stat(filepath.Join(v.Root(), d))
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi, err)
		}
	}
	if v.Mode() != ModeContent {
		t.Errorf("default mode %s", v.Mode())
	}
}
