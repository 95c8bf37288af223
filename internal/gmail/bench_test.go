package gmail

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// benchEnv stores 50 matching messages and sets every Gmail call to take
// 100 ms, with the server's concurrency cap at 8.
func benchEnv(b *testing.B) *env {
	e := newEnv(b, nil)
	for i := range 50 {
		e.insert(b, fmt.Sprintf("s%02d@example.org", i), fmt.Sprintf("bench %02d", i), "body")
	}
	if _, err := e.c.Profile(context.Background()); err != nil { // refresh the token outside the timing
		b.Fatal(err)
	}
	e.srv.SetConcurrencyCap(8)
	e.srv.SetLatency(100 * time.Millisecond)
	return e
}

func search50(b *testing.B, e *env) {
	res, err := e.c.Search(context.Background(), "bench", 50)
	if err != nil {
		b.Fatal(err)
	}
	if len(res) != 50 {
		b.Fatalf("%d results", len(res))
	}
}

// BenchmarkSearch50With100msLatency is the latency of one search_email
// call for 50 results when every Gmail call takes 100 ms: one get at a time
// would take 5.1 s; with 8 in flight it is about 100 ms (list) +
// ceil(50/8) x 100 ms = 0.8 s. Each search starts with a full quota budget
// (the pacer is reset outside the timing), as a tool call after a pause does.
func BenchmarkSearch50With100msLatency(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.c.limiter = rate.NewLimiter(rate.Limit(e.c.opts.FetchRate), e.c.opts.FetchBurst)
		b.StartTimer()
		search50(b, e)
	}
}

// BenchmarkSearch50With100msLatencySustained runs searches back to back on
// one client: after the first burst the pacer holds the gets to FetchRate
// (40/s), so a search settles at about 50/40 s. That is the quota guard
// working, not the fan-out.
func BenchmarkSearch50With100msLatencySustained(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	for range b.N {
		search50(b, e)
	}
}
