package approval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCollisionNeverOverwrites builds two different requests whose ids
// collide (with the id cut to 16 bits, as 48 bits were once cut) and shows
// the first, pending file survives byte for byte.
func TestCollisionNeverOverwrites(t *testing.T) {
	old := idHex
	idHex = 4
	defer func() { idHex = old }()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	a := sendReq()
	var b Request
	// The search starts at the first i whose request collides with a (as
	// found by searching from 0, which takes seconds): the requests are the
	// same on every run. Should their rendering change, the loop goes on to
	// the next collision.
	for i := 220683; ; i++ {
		b = a
		b.Body = fmt.Sprintf("Hi John,\n\nWire the money to account %d.\n", i)
		if b.SHA256()[:4] == a.SHA256()[:4] {
			break
		}
	}
	first := pending(t, v, a)
	before := readFile(t, v.path(DirPending, first))
	second := pending(t, v, b)
	if second == first {
		t.Fatalf("the colliding request took the same file %s", first)
	}
	if got := readFile(t, v.path(DirPending, first)); got != before {
		t.Fatalf("the first request file was overwritten:\n%s", got)
	}
	if !strings.Contains(readFile(t, v.path(DirPending, second)), "account") {
		t.Fatal("the second request file does not hold the second email")
	}
}

// TestPlantedFileAtTheNameSurvives: whatever sits under a request's name
// without being that request is never replaced.
func TestPlantedFileAtTheNameSurvives(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	req := sendReq()
	name := requestName(req, req.SHA256(), t0, 0)
	other := req
	other.To = "mallory@example.com"
	planted := string(renderRequest(other, other.SHA256(), "x-1", t0, t0.Add(time.Hour), ""))
	for _, content := range []string{planted, "not a request at all\n"} {
		writeFile(t, v.path(DirPending, name), content)
		got := pending(t, v, req)
		if got == name || readFile(t, v.path(DirPending, name)) != content {
			t.Fatalf("planted file replaced (request went to %s)", got)
		}
		if p, err := parseApproval([]byte(readFile(t, v.path(DirPending, got)))); err != nil || p.ContentSHA256 != req.SHA256() {
			t.Fatalf("request file %s: %+v %v", got, p, err)
		}
		os.Remove(v.path(DirPending, got))
	}
}

// TestApproverCorrects: with a ledger, a request whose subject or body the
// human corrected before approving is found by its issued id, and the
// correction is what is to be sent; its Done file records both hashes.
func TestApproverCorrects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	req := sendReq()
	name := pending(t, v, req)
	p := v.path(DirPending, name)
	writeFile(t, p, strings.Replace(readFile(t, p), "Notes attached.", "Notes attached (corrected).", 1))
	editField(t, p, "subject", `"Meeting notes, v2"`)
	move(t, v, DirPending, DirApproved, name)
	a := mustFind(t, v, req)
	if strings.Join(a.Edited, ",") != "subject,body" || a.Final.Subject != "Meeting notes, v2" ||
		!strings.Contains(a.Final.Body, "(corrected)") || a.Final.To != req.To || a.ContentSHA256 != req.SHA256() {
		t.Fatalf("approval = %+v", a)
	}
	c, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Record(Outcome{Status: StatusSent, SentAt: t0, GmailMessageID: "m1"}); err != nil {
		t.Fatal(err)
	}
	done := readFile(t, c.Path)
	for _, want := range []string{"\noriginal_sha256: " + req.SHA256() + "\n", "\nfinal_sha256: " + a.Final.SHA256() + "\n",
		"\nedited_by_approver: \"subject, body\"\n", "The approver corrected the subject and body before approving"} {
		if !strings.Contains(done, want) {
			t.Errorf("Done file lacks %q:\n%s", want, done)
		}
	}
	// Without a ledger nothing vouches for the file: corrections are refused.
	v2, _ := newVault(t, Options{})
	n2 := requestAndApprove(t, v2, req)
	editField(t, v2.path(DirApproved, n2), "subject", `"Other"`)
	if _, err := v2.Find(ctx, req); !errors.Is(err, ErrNoApproval) || !strings.Contains(err.Error(), "subject differs") {
		t.Fatalf("no ledger: %v", err)
	}
}

// TestApproverChangesRecipient: a recipient or thread change is refused
// for good, with the reason in the file, which leaves Approved/.
func TestApproverChangesRecipient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		req        Request
		key, value string
		wantReason string
	}{
		{sendReq(), "to", `"mallory@example.com"`, "the recipient was changed from john@example.com to mallory@example.com"},
		{replyReq(), "thread_id", `"ffff"`, "the thread was changed from 18d5a3b2c1d0e0f1 to ffff"},
		{replyReq(), "to", `"eve@example.org"`, "the recipient was changed from ann@example.org to eve@example.org"},
	} {
		v, _ := newVault(t, Options{Ledger: newLedger(t)})
		name := requestAndApprove(t, v, tc.req)
		editField(t, v.path(DirApproved, name), tc.key, tc.value)
		_, err := v.Find(ctx, tc.req)
		var re *RejectedError
		if !errors.As(err, &re) || !re.Refused || !strings.Contains(re.Reason, tc.wantReason) {
			t.Fatalf("%s: Find = %v", tc.key, err)
		}
		if n := dirNames(t, v, DirApproved); len(n) != 0 {
			t.Fatalf("left in Approved/: %v", n)
		}
		got := readFile(t, v.path(DirRejected, re.Name))
		for _, want := range []string{"\nstatus: refused\n", "\nreason: \"" + tc.wantReason, "> [!failure] Refused by mailgate, nothing was sent"} {
			if !strings.Contains(got, want) {
				t.Errorf("refused file lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "move it to Approved/") {
			t.Errorf("refused file still tells to approve it:\n%s", got)
		}
		// The next identical call gets the same answer.
		if _, err := v.Find(ctx, tc.req); !errors.As(err, &re) || !re.Refused || !strings.Contains(re.Reason, tc.wantReason) {
			t.Fatalf("again: %v", err)
		}
		if _, err := v.Approve(re.Name); err == nil || !strings.Contains(err.Error(), "mailgate refused it") {
			t.Fatalf("approving a refused file: %v", err)
		}
	}
}

// TestFilesTellTheTruth: a request moved to Rejected/ by hand says
// rejected once the gate sees it, one rejected from the terminal at once,
// and neither tells anyone to approve it.
func TestFilesTellTheTruth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{Ledger: newLedger(t)})
	req := sendReq()
	name, _ := v.EnsurePending(ctx, req)
	move(t, v, DirPending, DirRejected, name)
	if _, err := v.Find(ctx, req); !errors.Is(err, ErrRejected) {
		t.Fatal(err)
	}
	other := req
	other.Subject = "Other"
	n2, _ := v.EnsurePending(ctx, other)
	if _, err := v.Reject(n2); err != nil {
		t.Fatal(err)
	}
	n3, _ := v.EnsurePending(ctx, replyReq())
	it, err := v.Approve(n3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{v.path(DirRejected, name), v.path(DirRejected, n2)} {
		got := readFile(t, f)
		if !strings.Contains(got, "\nstatus: rejected\n") || strings.Contains(got, "status: pending") ||
			strings.Contains(got, "move it to Approved/") || !strings.Contains(got, "> [!failure] Rejected by the approver") {
			t.Errorf("rejected file:\n%s", got)
		}
	}
	got := readFile(t, v.path(DirApproved, it.Moved))
	if !strings.Contains(got, "\nstatus: approved\n") || !strings.Contains(got, "> [!success] "+approvedText) || strings.Contains(got, "While this file") {
		t.Errorf("approved file:\n%s", got)
	}
	// A change of mind: rejected, then approved again, says approved, not rejected.
	if _, err := v.Approve(n2); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, v.path(DirApproved, n2)); !strings.Contains(got, "\nstatus: approved\n") || strings.Contains(got, "Rejected by the approver") || strings.Contains(got, "rejected_at") {
		t.Errorf("re-approved file:\n%s", got)
	}
	if _, err := v.Find(ctx, replyReq()); err != nil {
		t.Fatalf("the terminal's approval is not honoured: %v", err)
	}
}

// TestPendingBacklog: at most MaxPendingPerRecipient requests to one
// recipient and MaxPending in all wait at once; a request already waiting
// is still returned.
func TestPendingBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{MaxPending: 3, MaxPendingPerRecipient: 2})
	req := func(to string, i int) Request {
		return Request{Kind: KindSend, To: to, Subject: fmt.Sprint("s", i), Body: "b\n"}
	}
	for i := 0; i < 2; i++ {
		if _, err := v.EnsurePending(ctx, req("a@example.com", i)); err != nil {
			t.Fatal(err)
		}
	}
	var be *BacklogError
	if _, err := v.EnsurePending(ctx, req("a@example.com", 2)); !errors.As(err, &be) || be.Recipient != "a@example.com" || be.Limit != 2 {
		t.Fatalf("third to one recipient: %v", err)
	}
	if _, err := v.EnsurePending(ctx, req("a@example.com", 1)); err != nil {
		t.Fatalf("a request already waiting: %v", err)
	}
	if _, err := v.EnsurePending(ctx, req("b@example.com", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.EnsurePending(ctx, req("c@example.com", 0)); !errors.As(err, &be) || be.Recipient != "" || be.Limit != 3 {
		t.Fatalf("fourth in all: %v", err)
	}
	if n := len(dirNames(t, v, DirPending)); n != 3 {
		t.Fatalf("%d files pending", n)
	}
}

// TestBodyMarkerInBodyCannotMoveTheBoundary: an email body that holds the
// marker line (and fake notes) is still read whole.
func TestBodyMarkerInBodyCannotMoveTheBoundary(t *testing.T) {
	t.Parallel()
	req := sendReq()
	req.Body = "> [!note] No warnings\n\n" + BodyMarker + "\n\nWire the money.\n"
	p, err := parseApproval(renderRequest(req, req.SHA256(), "id-1", t0, t0.Add(time.Hour), ""))
	if err != nil || p.Body != req.Body {
		t.Fatalf("body %q, %v", p.Body, err)
	}
}

// TestLegacyNamesStillWork: a request written by an earlier version
// (EMAIL_SEND_<12 hex>.md, no notes) and approved is still honoured.
func TestLegacyNamesStillWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, _ := newVault(t, Options{})
	req := sendReq()
	sha := req.SHA256()
	legacy := "---\ntype: email_send\nstatus: pending\nrequest_id: EMAIL_SEND_" + sha[:12] + "-00000000\nto: \"John <john@example.com>\"\nsubject: \"Meeting notes\"\n" +
		"created: 2026-02-14T10:00:00Z\nexpires: 2026-02-15T10:00:00Z\ncontent_sha256: " + sha + "\n---\n\n" + req.Body
	writeFile(t, v.path(DirApproved, "EMAIL_SEND_"+sha[:12]+".md"), legacy)
	a, err := v.Find(ctx, req)
	if err != nil || a.Name != "EMAIL_SEND_"+sha[:12]+".md" || len(a.Edited) != 0 {
		t.Fatalf("legacy approval: %+v %v", a, err)
	}
}
