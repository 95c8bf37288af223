package mcpserver

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Benchmarks of the agent-mail tools through the real protocol, in process
// (client → in-memory transport → server → SQLite file). Each reports its
// p50 and p99 latency next to ns/op; targets from the issue: fetch_inbox
// p50 ≤ 5 ms and search_messages p50 ≤ 20 ms with 100,000 stored messages,
// file_reservation_paths ≤ 5 ms for 50 paths against 100 live
// reservations, and send_message fast enough for ≥ 2,000 sends/s.

type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l[len(l)*99/100].Microseconds())/1000, "p99-ms")
}

// timed makes one call the way a client does (no test-side decoding) and
// records its latency.
func (h *amHarness) timed(b *testing.B, lat *latencies, name string, args map[string]any) {
	start := time.Now()
	res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	*lat = append(*lat, time.Since(start))
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %+v", name, err, res)
	}
}

// benchCall makes the same call every iteration and reports its latencies.
func (h *amHarness) benchCall(b *testing.B, name string, args map[string]any) {
	var lat latencies
	for b.Loop() {
		h.timed(b, &lat, name, args)
	}
	lat.report(b)
}

func BenchmarkSendMessage(b *testing.B) {
	h := newAMHarness(b)
	h.setup("/bench/app", "GreenDog", "BlueLake")
	args := map[string]any{"project_key": "/bench/app", "sender_name": "GreenDog", "to": []string{"BlueLake"},
		"subject": "Status update", "body_md": strings.Repeat("Progress on the migration. ", 20), "thread_id": "BENCH-1"}
	h.benchCall(b, "send_message", args)
}

// BenchmarkSendMessagePipelined is one client keeping 16 sends in flight
// on one session (as a stdio client that does not wait for each answer):
// the server runs calls concurrently and group-commits their writes.
func BenchmarkSendMessagePipelined(b *testing.B) {
	h := newAMHarness(b)
	h.setup("/bench/app", "GreenDog", "BlueLake")
	args := map[string]any{"project_key": "/bench/app", "sender_name": "GreenDog", "to": []string{"BlueLake"},
		"subject": "Status update", "body_md": strings.Repeat("Progress on the migration. ", 20), "thread_id": "BENCH-1"}
	b.SetParallelism(8)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: "send_message", Arguments: args})
			if err != nil || res.IsError {
				b.Errorf("send: %v %+v", err, res)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
}

// seeded returns a harness on a copy of a store holding n messages from
// GreenDog to BlueLake. The seeded store is built once through SQL (the
// tools would take minutes) and kept in the temp directory, keyed by the
// schema a fresh store of this code has (whichever folder its migrations
// live in), so later runs start at once. (A store built by live sends, at
// a million messages: agentmail/sqlite's scale benchmarks.)
//
// MAILGATE_BENCH_STORE names a store file to use instead (a copy of it),
// say agentmail/sqlite's scale store of a million messages, whose project
// and agents are these.
func seeded(b *testing.B, n int) *amHarness {
	b.Helper()
	if from := os.Getenv("MAILGATE_BENCH_STORE"); from != "" {
		data, err := os.ReadFile(from)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(b.TempDir(), "state.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		return newAMHarnessAt(b, path)
	}
	_, fresh := openService(b, filepath.Join(b.TempDir(), "schema.db"))
	var schema string
	if err := fresh.QueryRow(`SELECT group_concat(coalesce(sql, ''), ';') FROM (SELECT sql FROM sqlite_schema ORDER BY name)`).Scan(&schema); err != nil {
		b.Fatal(err)
	}
	sum := sha256.Sum256([]byte(schema))
	template := filepath.Join(os.TempDir(), fmt.Sprintf("mailgate-agentmail-bench-%d-%x.db", n, sum[:6]))
	if _, err := os.Stat(template); err != nil {
		tmp := template + ".tmp"
		os.Remove(tmp)
		h := newAMHarnessAt(b, tmp)
		seedMessages(b, h, n)
		h.cs.Close()
		h.db.Close() // the last connection checkpoints the WAL into the file
		if err := os.Rename(tmp, template); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "state.db")
	data, err := os.ReadFile(template)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return newAMHarnessAt(b, path)
}

// seedMessages stores n messages from GreenDog to BlueLake straight through
// SQL, in one transaction.
func seedMessages(b *testing.B, h *amHarness, n int) {
	b.Helper()
	h.setup("/bench/app", "GreenDog", "BlueLake")
	text := testutil.ZipfText(7, 9)
	tx, err := h.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	msg, err := tx.Prepare(`INSERT INTO am_messages (project_id, sender_id, thread_id, subject, body_md, importance, ack_required, created_us) VALUES (1, 1, ?, ?, ?, 'normal', 0, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	rcpt, err := tx.Prepare(`INSERT INTO am_recipients (message_id, agent_id, ord, kind, delivered_us) VALUES (?, 2, 0, 'to', ?)`)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now().Add(-time.Duration(n) * time.Second).UnixMicro()
	for i := range n {
		res, err := msg.Exec(fmt.Sprintf("T-%d", i%500), text(6), text(40), t0+int64(i)*1e6)
		if err != nil {
			b.Fatal(err)
		}
		id, _ := res.LastInsertId()
		if _, err := rcpt.Exec(id, t0+int64(i)*1e6); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	st, err := amsqlite.Open(h.ctx, h.db) // index what the inserts queued, as a server would
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close() // its background statement preparation done before the DB closes
	if err := st.IndexPending(h.ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := h.db.Exec(`INSERT INTO am_messages_fts(am_messages_fts) VALUES ('optimize'); PRAGMA optimize`); err != nil {
		b.Fatal(err)
	}
}

const benchStored = 100_000

func BenchmarkFetchInbox(b *testing.B) {
	h := seeded(b, benchStored)
	h.benchCall(b, "fetch_inbox", map[string]any{"project_key": "/bench/app", "agent_name": "BlueLake", "limit": 20, "include_bodies": true})
}

func BenchmarkFetchInboxUnreadThread(b *testing.B) {
	h := seeded(b, benchStored)
	h.benchCall(b, "fetch_inbox", map[string]any{"project_key": "/bench/app", "agent_name": "BlueLake", "limit": 20, "unread_only": true, "thread_id": "T-42"})
}

func BenchmarkSearchMessages(b *testing.B) {
	h := seeded(b, benchStored)
	queries := []string{"flaky test", `"deploy migration"`, "schema OR latency", "retr*", "w0100x", "api NOT docs"}
	var lat latencies
	i := 0
	for b.Loop() {
		h.timed(b, &lat, "search_messages", map[string]any{"project_key": "/bench/app", "query": queries[i%len(queries)], "limit": 20})
		i++
	}
	lat.report(b)
}

// BenchmarkSearchEach times each query form separately.
func BenchmarkSearchEach(b *testing.B) {
	h := seeded(b, benchStored)
	for _, q := range []string{"flaky test", `"deploy migration"`, "schema OR latency", "retr*", "migra*", "w0100x", "api NOT docs"} {
		b.Run(q, func(b *testing.B) {
			h.benchCall(b, "search_messages", map[string]any{"project_key": "/bench/app", "query": q, "limit": 20})
		})
	}
}

func BenchmarkFileReservationPaths(b *testing.B) {
	h := newAMHarness(b)
	agents := []string{"Holder0", "Holder1", "Holder2", "Holder3", "Requester"}
	h.setup("/bench/app", agents...)
	// 100 live reservations of other agents: files, directories and globs.
	for i := range 100 {
		var p string
		switch i % 4 {
		case 0:
			p = fmt.Sprintf("pkg/mod%d/file%d.go", i, i)
		case 1:
			p = fmt.Sprintf("pkg/mod%d/**", i)
		case 2:
			p = fmt.Sprintf("web/src/comp%d/*.tsx", i)
		default:
			p = fmt.Sprintf("docs/**/section%d*.md", i)
		}
		h.call("file_reservation_paths", map[string]any{"project_key": "/bench/app", "agent_name": agents[i%4], "paths": []string{p}, "exclusive": i%3 != 0}, nil)
	}
	// 50 requested paths; about one in ten overlaps one held reservation.
	paths := make([]string, 50)
	for i := range paths {
		switch {
		case i%10 == 1:
			paths[i] = fmt.Sprintf("pkg/mod%d/new.go", i) // under pkg/mod%d/** (i%4 == 1)
		case i%10 == 6:
			paths[i] = fmt.Sprintf("web/src/comp%d/Button.tsx", i) // matches web/src/comp%d/*.tsx (i%4 == 2)
		case i%2 == 0:
			paths[i] = fmt.Sprintf("internal/x%d/*.go", i)
		default:
			paths[i] = fmt.Sprintf("pkg/free%d/**", i)
		}
	}
	reserve := map[string]any{"project_key": "/bench/app", "agent_name": "Requester", "paths": paths, "ttl_seconds": 600}
	release := map[string]any{"project_key": "/bench/app", "agent_name": "Requester"}
	var lat latencies
	for b.Loop() {
		h.timed(b, &lat, "file_reservation_paths", reserve)
		b.StopTimer()
		h.call("release_file_reservations", release, nil)
		b.StartTimer()
	}
	lat.report(b)
}
