package sqlite_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// The scale benchmarks (issue 29): search and inbox reads on one project
// holding MAILGATE_BENCH_SCALE messages (say 1000000) in a store built by
// live sends: Service.Send from several goroutines, group-committed, with
// the store's own indexer taking the queue in its batches, so the full-text
// index has the many segments a real store has (not one optimised
// segment). Opt-in, as the store takes minutes to build; it is built once
// and cached in the temporary directory, keyed by the schema this code
// creates (so a schema change builds a new one), and each benchmark runs on
// a copy of it.
//
//	MAILGATE_BENCH_SCALE=1000000 go test -run '^$' -bench Scale -benchtime 300x -timeout 2h ./internal/agentmail/sqlite
//	MAILGATE_BENCH_STORE=/tmp/old.db go test -run '^$' -bench Scale …   (a given store, migrated on open)

// scaleQueries are the search forms the issue names: words, a phrase, a
// prefix, OR, NOT, and a rare word.
var scaleQueries = []struct{ name, q string }{
	{"words", "flaky test"},
	{"phrase", `"deploy migration"`},
	{"prefix", "retr*"},
	{"prefix2", "mig*"},
	{"prefix5", "migra*"},
	{"or", "schema OR latency"},
	{"not", "api NOT docs"},
	{"rare", "w0100x"},
}

// schemaKey names the schema a fresh store of this code has.
func schemaKey(tb testing.TB) string {
	db, _, _ := handle(tb, filepath.Join(tb.TempDir(), "schema.db"), 0)
	var schema string
	if err := db.QueryRow(`SELECT group_concat(coalesce(sql, ''), ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)`).Scan(&schema); err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256([]byte(schema)))[:12]
}

// scaleStore returns a Service on a copy of the cached store of n messages,
// or of the store file MAILGATE_BENCH_STORE names (say one an older
// mailgate built, which opening it migrates: how long that took is
// printed).
func scaleStore(b *testing.B) *agentmail.Service {
	b.Helper()
	if from := os.Getenv("MAILGATE_BENCH_STORE"); from != "" {
		path := filepath.Join(b.TempDir(), "state.db")
		copyFile(b, from, path)
		start := time.Now()
		_, _, svc := handle(b, path, 0)
		fmt.Fprintf(os.Stderr, "opened (and migrated) a copy of %s in %s\n", from, time.Since(start).Round(time.Millisecond))
		return svc
	}
	n, _ := strconv.Atoi(os.Getenv("MAILGATE_BENCH_SCALE"))
	if n <= 0 {
		b.Skip("set MAILGATE_BENCH_SCALE to a number of messages (say 1000000) to run the scale benchmarks")
	}
	cached := filepath.Join(os.TempDir(), fmt.Sprintf("mailgate-scale-live-%d-%s.db", n, schemaKey(b)))
	if _, err := os.Stat(cached); err != nil {
		buildScaleStore(b, cached, n)
	}
	path := filepath.Join(b.TempDir(), "state.db")
	copyFile(b, cached, path)
	_, _, svc := handle(b, path, 0)
	return svc
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	in, err := os.Open(from)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// buildScaleStore sends n messages from GreenDog to BlueLake through the
// Service, 16 senders at once, then closes the store (which indexes what
// is left queued and checkpoints the WAL) and moves it to path.
func buildScaleStore(b *testing.B, path string, n int) {
	tmp := path + ".tmp"
	os.Remove(tmp)
	os.Remove(tmp + "-wal")
	os.Remove(tmp + "-shm")
	db, _, svc := handle(b, tmp, 0)
	amtest.Register(b, svc, "/bench/app", "GreenDog", "BlueLake")
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	ctx := context.Background()
	for w := range 16 {
		wg.Go(func() {
			text := testutil.ZipfText(7, uint64(w))
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/bench/app", Sender: "GreenDog", To: []string{"BlueLake"},
					Subject: text(6), BodyMD: text(40), ThreadID: fmt.Sprintf("T-%d", i%500)}); err != nil {
					b.Error(err)
					return
				}
				if i%100_000 == 0 {
					fmt.Fprintf(os.Stderr, "scale store: %d of %d messages sent (%s)\n", i, n, time.Since(start).Round(time.Second))
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	if err := svc.Close(); err != nil {
		b.Fatal(err)
	}
	var segments int
	if err := db.QueryRow(`SELECT count(DISTINCT segid) FROM am_messages_fts_idx`).Scan(&segments); err == nil {
		fmt.Fprintf(os.Stderr, "scale store: %d messages in %s; %d index segments\n", n, time.Since(start).Round(time.Second), segments)
	}
	if err := db.Close(); err != nil { // the last connection checkpoints the WAL
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScaleSearch times each search form on the scale store.
func BenchmarkScaleSearch(b *testing.B) {
	svc := scaleStore(b)
	ctx := context.Background()
	for _, q := range scaleQueries {
		b.Run(q.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/bench/app", Query: q.q, Limit: 20}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatencies(b, lat)
		})
	}
}

// BenchmarkScaleFetchInbox times fetch_inbox (20 messages with bodies) on
// the scale store.
func BenchmarkScaleFetchInbox(b *testing.B) {
	svc := scaleStore(b)
	ctx := context.Background()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/bench/app", Agent: "BlueLake", Limit: 20, IncludeBodies: true}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportLatencies(b, lat)
}

func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
