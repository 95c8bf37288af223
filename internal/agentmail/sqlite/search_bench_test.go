//go:build unix

package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// loadWords are cmd/mailgate-load's words (ops.go): the messages and the
// searches below have the HTTP load's shapes.
var loadWords = []string{"deploy", "migration", "schema", "review", "build", "test", "flaky", "release", "api", "docs",
	"frontend", "backend", "cache", "index", "query", "latency", "timeout", "retry", "token", "config",
	"refactor", "parser", "handler", "router", "storage", "metrics", "tracing", "lint", "fixture", "rollback"}

// BenchmarkSearchLoadShapes times Service.Search for each query shape of
// the HTTP load (cmd/mailgate-load's search) on 5,000 messages sent as the
// load sends them, reporting the process's CPU per search (user + system),
// which a loaded machine moves less than the wall time:
//
//	go test -run '^$' -bench SearchLoadShapes -benchtime 1000x ./internal/agentmail/sqlite
func BenchmarkSearchLoadShapes(b *testing.B) {
	svc := open(b, filepath.Join(b.TempDir(), "s.db"))
	amtest.Register(b, svc, "/p", "GreenDog", "BlueLake")
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string { return loadWords[rng.IntN(len(loadWords))] }
	ident := func() string { return fmt.Sprintf("%s%d", word(), rng.IntN(100)) }
	ctx := context.Background()
	for i := range 5000 {
		t := rng.IntN(500)
		body := fmt.Sprintf("Working on t%03d: `%s` needs a %s before the %s.\n\n- [ ] %s `%s`\n- [x] %s `%s`\n\nSee `internal/%s/%s.go` (step %d).",
			t, ident(), word(), word(), word(), ident(), word(), ident(), word(), ident(), i)
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "GreenDog", To: []string{"BlueLake"},
			Subject: fmt.Sprintf("[t%03d] %s %s", t, word(), ident()), BodyMD: body, ThreadID: fmt.Sprintf("T-%03d", t)}); err != nil {
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
