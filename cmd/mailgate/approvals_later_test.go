package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/schedule"
	"github.com/mailgate/mailgate/internal/store"
)

// TestApprovalsScheduledListAndCancel: `mailgate approvals` lists an
// approved email kept for later with its time, and `approvals cancel ID`
// withdraws it: out of the schedule, its file in Rejected/ with the reason;
// a second cancel finds nothing.
func TestApprovalsScheduledListAndCancel(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	home := t.TempDir()
	v, err := approval.Open(filepath.Join(home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(5 * time.Hour).UTC().Truncate(time.Second)
	req := approval.Request{Kind: approval.KindSend, To: "alice@example.com", Subject: "See you", Body: "Tomorrow.\n", SendAt: at}
	name, err := v.EnsurePending(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(home, "vault", approval.DirPending, name), filepath.Join(home, "vault", approval.DirApproved, name)); err != nil {
		t.Fatal(err)
	}
	a, err := v.Find(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := schedule.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Schedule(ctx, gate.ScheduledEmail{DoneName: c.Name, SendAt: at, Final: a.Final, Tool: "send_email", Prepared: gate.Prepared{Raw: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := c.RecordScheduled(at); err != nil {
		t.Fatal(err)
	}
	db.Close()
	id := strings.TrimSuffix(c.Name, ".md")

	r := newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals")
	if code := r.run(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	mustHave(t, r.stdout.String(), "Scheduled (1)", id+"  at "+approval.FormatSendAt(at)+" (UTC)  send to alice@example.com  \"See you\"", "mailgate approvals cancel ID")

	r = newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals", "cancel", id[:len(id)-4])
	if code := r.run(t); code != 0 {
		t.Fatalf("cancel: exit %d: %s", code, r.stderr)
	}
	mustHave(t, r.stdout.String(), "Withdrawn: Done/"+c.Name+" → Rejected/"+c.Name)
	b, err := os.ReadFile(filepath.Join(home, "vault", approval.DirRejected, c.Name))
	if err != nil {
		t.Fatal(err)
	}
	mustHave(t, string(b), "status: rejected", "withdrawn with mailgate approvals cancel before its send time")

	r = newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals")
	if code := r.run(t); code != 0 || strings.Contains(r.stdout.String(), "Scheduled (") {
		t.Fatalf("after cancel: exit %d: %s", code, r.stdout.String())
	}
	r = newSetupRun([]string{"MAILGATE_HOME=" + home}, nil, "approvals", "cancel", id)
	if code := r.run(t); code == 0 || !strings.Contains(r.stderr.String(), "no scheduled email waiting matches") {
		t.Fatalf("second cancel: exit %d: %s", code, r.stderr.String())
	}
}

func mustHave(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("lacks %q:\n%s", w, text)
		}
	}
}
