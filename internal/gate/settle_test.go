package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestFullDiskSendSettledFromAudit is the full-vault case with an injected
// ENOSPC (the seam approval.Options.FaultWrite; cmd/mailgate's
// TestFullVaultSendSettledFromAudit does it on a real tmpfs where the
// machine allows): the claim succeeds, Gmail sends, the Done rewrite
// fails; once writes work again, Settle completes the Done file from the
// audit log's success line, and Sent is never asked.
func TestFullDiskSendSettledFromAudit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clock := testutil.NewClock(t0)
	var full atomic.Bool
	v, err := approval.Open(filepath.Join(dir, "vault"), approval.Options{Now: clock.Now, FaultWrite: func(path string) error {
		if full.Load() {
			return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.New(ctx, storetest.Open(t), 10, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	al, err := audit.Open(filepath.Join(dir, "audit"))
	testutil.Closing(t, al, err)
	asked := 0
	g := &Gate{Vault: v, Limiter: lim, Audit: al, Now: clock.Now, Sent: func(context.Context, SentQuery) (SendResult, bool, error) {
		asked++
		return SendResult{}, false, nil
	}}
	req := sendReq()
	name, err := v.EnsurePending(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "vault", approval.DirPending, name), filepath.Join(dir, "vault", approval.DirApproved, name)); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	var fs fakeSend
	out := g.Submit(ctx, "send_email", req, fs.send)
	if out.Status != Sent || fs.calls.Load() != 1 {
		t.Fatalf("send: %v %v (%d calls)", out.Status, out.Err, fs.calls.Load())
	}
	done := filepath.Join(dir, "vault", approval.DirDone, out.DoneFile)
	if data, _ := os.ReadFile(done); !strings.Contains(string(data), "status: pending") {
		t.Fatalf("the injected ENOSPC did not stop the Done rewrite:\n%s", data)
	}
	full.Store(false)
	clock.Advance(time.Hour)
	r, err := g.Settle(ctx, "")
	if err != nil || r.Sent != 1 || asked != 0 {
		t.Fatalf("Settle: %+v, %v (Sent asked %d times)", r, err, asked)
	}
	data, _ := os.ReadFile(done)
	for _, want := range []string{"status: sent", `gmail_message_id: "msg1"`, "settled_by: audit_log", "recorded later from the audit log"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("Done file lacks %q:\n%s", want, data)
		}
	}
	// Settled once: a second run finds nothing to do.
	if r, err := g.Settle(ctx, ""); err != nil || r.Sent+r.NotSent+r.Open != 0 {
		t.Errorf("second Settle: %+v, %v", r, err)
	}
}
