package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// benchSend is a fresh store with two agents, and a send between them.
func benchSend(b *testing.B) (*agentmail.Service, agentmail.SendParams) {
	svc := open(b, filepath.Join(b.TempDir(), "s.db"))
	amtest.Register(b, svc, "/p", "GreenDog", "BlueLake")
	return svc, agentmail.SendParams{ProjectKey: "/p", Sender: "GreenDog", To: []string{"BlueLake"}, Subject: "Status update",
		BodyMD: strings.Repeat("Progress on the migration. ", 20), ThreadID: "BENCH-1"}
}

// BenchmarkServiceSend measures Service.Send without MCP: the store's share
// of a send_message call.
func BenchmarkServiceSend(b *testing.B) {
	svc, p := benchSend(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := svc.Send(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServiceSendConcurrent: 16 goroutines sending at once, which the
// store group-commits.
func BenchmarkServiceSendConcurrent(b *testing.B) {
	svc, p := benchSend(b)
	ctx := context.Background()
	var wg sync.WaitGroup
	start := time.Now()
	work := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			for range work {
				if _, err := svc.Send(ctx, p); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
}
