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

// BenchmarkModifyMessages1000With100msLatency is modify_labels on 1,000
// messages at the client level when every Gmail call takes 100 ms: one
// messages.batchModify call (Gmail takes up to 1,000 ids per call), so
// about 100 ms, where one messages.modify per message would take 100 s
// sequentially.
func BenchmarkModifyMessages1000With100msLatency(b *testing.B) {
	e := newEnv(b, []string{ScopeModify})
	ids := e.insertMany(b, 1000, "INBOX", "UNREAD")
	ctx := context.Background()
	if _, err := e.c.Profile(ctx); err != nil { // refresh the token outside the timing
		b.Fatal(err)
	}
	e.srv.SetLatency(100 * time.Millisecond)
	b.ResetTimer()
	for i := range b.N {
		ch := LabelChange{Remove: []string{"UNREAD"}}
		if i%2 == 1 {
			ch = LabelChange{Add: []string{"UNREAD"}}
		}
		if done, err := e.c.ModifyMessages(ctx, ids, ch); err != nil || done != 1000 {
			b.Fatal(done, err)
		}
	}
}

// BenchmarkSearchPaging500With100msLatency is search_email paging through
// 500 results, 50 per page (the tool's cap), at the client level, when
// every Gmail call takes 100 ms: 10 lists and 500 metadata gets, 8 in
// flight, paced by the quota guard (burst 50, then 40 gets/s), which
// dominates: about 0.8 s for the first page, then ~1.25 s per page.
func BenchmarkSearchPaging500With100msLatency(b *testing.B) {
	e := newEnv(b, nil)
	for i := range 500 {
		e.insert(b, "ci@example.org", fmt.Sprintf("build %03d", i), "nightly build")
	}
	ctx := context.Background()
	if _, err := e.c.Profile(ctx); err != nil {
		b.Fatal(err)
	}
	e.srv.SetConcurrencyCap(8)
	e.srv.SetLatency(100 * time.Millisecond)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e.c.limiter = rate.NewLimiter(rate.Limit(e.c.opts.FetchRate), e.c.opts.FetchBurst)
		b.StartTimer()
		n, tok := 0, ""
		for {
			p, err := e.c.SearchPage(ctx, "nightly", 50, tok)
			if err != nil {
				b.Fatal(err)
			}
			n += len(p.Results)
			if tok = p.NextPageToken; tok == "" {
				break
			}
		}
		if n != 500 {
			b.Fatalf("%d results", n)
		}
	}
}
