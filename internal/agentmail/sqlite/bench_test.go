package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// BenchmarkServiceSend measures Service.Send without MCP: the store's share
// of a send_message call.
func BenchmarkServiceSend(b *testing.B) {
	svc := open(b, filepath.Join(b.TempDir(), "s.db"), agentmail.Options{})
	setup(b, svc, "/p", "GreenDog", "BlueLake")
	p := agentmail.SendParams{ProjectKey: "/p", Sender: "GreenDog", To: []string{"BlueLake"}, Subject: "Status update",
		BodyMD: strings.Repeat("Progress on the migration. ", 20), ThreadID: "BENCH-1"}
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
	svc := open(b, filepath.Join(b.TempDir(), "s.db"), agentmail.Options{})
	setup(b, svc, "/p", "GreenDog", "BlueLake")
	p := agentmail.SendParams{ProjectKey: "/p", Sender: "GreenDog", To: []string{"BlueLake"}, Subject: "Status update",
		BodyMD: strings.Repeat("Progress on the migration. ", 20), ThreadID: "BENCH-1"}
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
