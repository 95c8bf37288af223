//go:build unix

package sqlite_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/loadtext"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// BenchmarkSearchLoadShapes times Service.Search for each query shape of
// the HTTP load (cmd/mailgate-load's search) on 5,000 messages sent as the
// load sends them, reporting the process's CPU per search (user + system),
// which a loaded machine moves less than the wall time:
//
//	go test -run '^$' -bench SearchLoadShapes -benchtime 1000x ./internal/agentmail/sqlite
func BenchmarkSearchLoadShapes(b *testing.B) {
	svc := open(b, filepath.Join(b.TempDir(), "s.db"))
	amtest.Register(b, svc, "/p", "GreenDog", "BlueLake")
	text := loadtext.New(rand.New(rand.NewPCG(1, 2)))
	ctx := context.Background()
	for i := range 5000 {
		subject, body, thread := text.Message(i)
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "GreenDog", To: []string{"BlueLake"},
			Subject: subject, BodyMD: body, ThreadID: thread}); err != nil {
			b.Fatal(err)
		}
	}
	// Index what is queued, then give the indexer's merges time to end.
	if _, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: "deploy"}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	for _, q := range []struct{ name, q string }{{"ticket", "t042"}, {"ident", "cache42"}, {"or", "cache42 OR retry7"},
		{"word", "deploy"}, {"subject", "subject:deploy"}} {
		b.Run(q.name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: q.q, Limit: 20}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
