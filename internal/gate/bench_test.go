package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
)

// BenchmarkGateSubmit measures the gate's own cost of one approved send —
// find, reserve, claim (rename + fsyncs + claimed rewrite), record, audit
// (fsynced) — with a no-op Gmail call, in a vault holding 10,000 files in
// Done/ and 1,000 non-matching approvals in Approved/. Creating each op's
// approval is excluded from the timing. The clock advances 6 minutes per op
// so the rolling window holds at most the limit, as in production.
func BenchmarkGateSubmit(b *testing.B) {
	for _, mode := range []approval.Mode{approval.ModeContent, approval.ModeRecipient} {
		b.Run(string(mode), func(b *testing.B) {
			e := newEnv(b, 10)
			e.mode = mode
			g := e.gate(b, false)
			fillVault(b, e, mode)
			send := func(context.Context) (SendResult, error) { return SendResult{MessageID: "m", ThreadID: "t"}, nil }
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				e.Advance(6 * time.Minute)
				req := numbered(100000 + i)
				e.approve(b, g, req)
				b.StartTimer()
				if out := g.Submit(ctx, "send_email", req, send); out.Status != Sent {
					b.Fatalf("op %d: %v %v", i, out.Status, out.Err)
				}
			}
		})
	}
}

// fillVault writes 10,000 consumed files into Done/ and 1,000 approvals for
// other emails into Approved/ (server-style request files in content mode,
// the contract's hand-written files in recipient mode).
func fillVault(b *testing.B, e *env, mode approval.Mode) {
	b.Helper()
	done := filepath.Join(e.vaultDir(), approval.DirDone)
	for i := range 10000 {
		name := fmt.Sprintf("EMAIL_SEND_%012x.20260101T000000Z-%06x.md", i, i)
		body := fmt.Sprintf("---\ntype: email_send\nstatus: sent\nto: \"old%d@example.com\"\n---\n\nOld email %d.\n", i, i)
		if err := os.WriteFile(filepath.Join(done, name), []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	approved := filepath.Join(e.vaultDir(), approval.DirApproved)
	for i := range 1000 {
		var name, body string
		if mode == approval.ModeContent {
			name = fmt.Sprintf("EMAIL_SEND_%012x.md", 0xf00000000000+i)
			body = fmt.Sprintf("---\ntype: email_send\nstatus: pending\nto: \"other%d@example.com\"\nsubject: \"Other\"\nexpires: 2030-01-01T00:00:00Z\n---\n\nOther %d.\n", i, i)
		} else {
			name = fmt.Sprintf("0-approve-other-%04d.md", i) // sorts before the match: worst case
			body = fmt.Sprintf("---\ntype: email_send\nstatus: approved\nto: other%d@example.com\nexpires: 2030-01-01T00:00:00Z\n---\n\nRisk: low.\n", i)
		}
		if err := os.WriteFile(filepath.Join(approved, name), []byte(body), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
