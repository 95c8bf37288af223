package mirror_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
)

// BenchmarkSendOutboxCost: what the outbox trigger adds to a send (the
// agent's side of mirroring): no sink registered, versus the Gmail mirror
// and the archive both registered (workers not running, so only the
// enqueue is measured).
func BenchmarkSendOutboxCost(b *testing.B) {
	for _, sinks := range [][]string{nil, {mirror.GmailSinkName, "archive"}} {
		b.Run(strings.Join(append([]string{"sinks"}, sinks...), "-"), func(b *testing.B) {
			e := newEnv(b)
			ctx := context.Background()
			for _, s := range sinks {
				if _, err := outbox.Open(ctx, e.db, s, 0); err != nil {
					b.Fatal(err)
				}
			}
			p := agentmail.SendParams{ProjectKey: project, Sender: "BlueLake", To: []string{"GreenCastle"}, Subject: "Status",
				BodyMD: strings.Repeat("Progress on the migration. ", 20), ThreadID: "BENCH-1"}
			for b.Loop() {
				if _, err := e.svc.Send(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
