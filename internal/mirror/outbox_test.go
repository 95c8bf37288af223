package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestClaim: leases keep concurrent claimers apart, a lapsed lease frees
// the row, and a thread's rows come out one at a time, in order.
func TestClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// The leases follow a test clock: one lapses only when the clock is
	// moved past it, however slow the machine.
	clock := testutil.NewClock(time.Now())
	a, err := outbox.Open(ctx, e.db, "test", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	a.SetClock(clock.Now)
	first := e.send(t, "BlueLake", "t1", "", "GreenCastle")
	reply := e.reply(t, "GreenCastle", first)
	other := e.send(t, "RedStone", "t2", "", "BlueLake")

	db2, _ := openStore(t, e.path)
	b, err := outbox.Open(ctx, db2, "test", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	b.SetClock(clock.Now)
	var mu sync.Mutex
	got := map[int64]int{}
	firstClaim := map[int64]outbox.Item{}
	var wg sync.WaitGroup
	for _, ob := range []*outbox.Outbox{a, b, a, b} {
		wg.Go(func() {
			items, err := ob.Claim(ctx, 10)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, it := range items {
				got[it.MessageID]++
				firstClaim[it.MessageID] = it
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	want := map[int64]int{first: 1, other: 1} // the reply waits for its thread's first message
	if len(got) != len(want) || got[first] != 1 || got[other] != 1 {
		t.Fatalf("claimed %v, want %v", got, want)
	}

	steps := []struct {
		name  string
		do    func() ([]outbox.Item, error)
		want  []int64
		tries int
	}{
		{"leased rows are not handed out again", func() ([]outbox.Item, error) { return a.Claim(ctx, 10) }, nil, 0},
		{"a lapsed lease frees the row", func() ([]outbox.Item, error) {
			clock.Advance(250 * time.Millisecond)
			return b.Claim(ctx, 10)
		}, []int64{first, other}, 2},
		{"the reply follows once the first is done", func() ([]outbox.Item, error) {
			if err := b.Done(ctx, outbox.Item{MessageID: first}, nil); err != nil {
				return nil, err
			}
			return a.Claim(ctx, 10)
		}, []int64{reply}, 1},
	}
	for _, s := range steps {
		items, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var ids []int64
		for _, it := range items {
			ids = append(ids, it.MessageID)
			if it.Attempts != s.tries {
				t.Errorf("%s: message %d attempts %d, want %d", s.name, it.MessageID, it.Attempts, s.tries)
			}
		}
		if len(ids) != len(s.want) || (len(ids) > 0 && ids[0] != s.want[0]) {
			t.Errorf("%s: claimed %v, want %v", s.name, ids, s.want)
		}
	}
	// Retry by the claim whose lease was taken over is ignored.
	if err := a.Retry(ctx, firstClaim[other], time.Hour, errors.New("x")); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Pending(ctx); n != 2 {
		t.Errorf("pending %d, want 2", n)
	}
}

// TestRetryOfALapsedClaim: one worker's lanes share an Outbox. A lane whose
// lease lapsed while it worked must not release the row another lane has
// claimed since: that let a third lane take the row and insert the message
// twice (TestCrash under load). The claim's own Retry still releases it.
func TestRetryOfALapsedClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clock := testutil.NewClock(time.Now())
	ob, err := outbox.Open(ctx, e.db, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ob.SetClock(clock.Now)
	id := e.send(t, "BlueLake", "lapsing", "", "GreenCastle")
	claim := func(want int) []outbox.Item {
		t.Helper()
		items, err := ob.Claim(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != want || want == 1 && items[0].MessageID != id {
			t.Fatalf("claimed %+v, want %d row(s) of message %d", items, want, id)
		}
		return items
	}
	slow := claim(1)[0]
	clock.Advance(time.Minute + time.Second) // the slow lane's lease lapses
	fresh := claim(1)[0]
	if err := ob.Retry(ctx, slow, 0, errors.New("deadline exceeded")); err != nil {
		t.Fatal(err)
	}
	claim(0) // still leased by the fresh claim
	if err := ob.Retry(ctx, fresh, 0, errors.New("transient")); err != nil {
		t.Fatal(err)
	}
	if again := claim(1)[0]; again.Attempts != 3 {
		t.Errorf("attempts %d, want 3", again.Attempts)
	}
}

// TestOutboxTrigger: every message is queued for every registered sink,
// keyed by its thread (its thread_id, or its own id when it names none):
// the ones stored before a sink registered by the registration's backfill,
// later ones by the trigger in the sending transaction.
func TestOutboxTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	before := e.send(t, "BlueLake", "before the sinks", "", "GreenCastle")
	var obs []*outbox.Outbox
	for _, sink := range []string{mirror.GmailSinkName, "archive"} {
		ob, err := outbox.Open(ctx, e.db, sink, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, ob)
	}
	plain, threaded := e.send(t, "BlueLake", "plain", "", "GreenCastle"), e.send(t, "BlueLake", "threaded", "T-1", "GreenCastle")
	want := []outbox.Item{
		{MessageID: before, ThreadKey: strconv.FormatInt(before, 10)},
		{MessageID: plain, ThreadKey: strconv.FormatInt(plain, 10)},
		{MessageID: threaded, ThreadKey: "T-1"},
	}
	for _, ob := range obs {
		items, err := ob.Claim(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		same := func(a, b outbox.Item) bool { return a.MessageID == b.MessageID && a.ThreadKey == b.ThreadKey }
		if !slices.EqualFunc(items, want, same) {
			t.Errorf("claimed %+v, want %+v", items, want)
		}
	}
}

// TestClaimManyWorkers: workers on four store handles (think: servers)
// drain one outbox at once. Every row is handed out exactly once, and a
// thread's rows in order: none is claimed before the one ahead of it in its
// thread is done.
func TestClaimManyWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const threads, perThread = 6, 10
	threadOf := map[int64]string{}
	for i := range threads * perThread {
		th := fmt.Sprintf("thread-%d", i%threads)
		threadOf[e.send(t, "BlueLake", fmt.Sprintf("m%d", i), th, "GreenCastle")] = th
	}
	var obs []*outbox.Outbox
	for range 4 {
		db, _ := openStore(t, e.path)
		ob, err := outbox.Open(ctx, db, "many", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, ob)
	}
	var mu sync.Mutex
	claims := map[int64]int{}
	last := map[string]int64{} // per thread, the last message done
	var wg sync.WaitGroup
	for w := range 8 {
		ob := obs[w%len(obs)]
		wg.Go(func() {
			for idle := 0; idle < 20; {
				items, err := ob.Claim(ctx, 2)
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 0 {
					idle++
					time.Sleep(5 * time.Millisecond)
					continue
				}
				idle = 0
				for _, it := range items {
					mu.Lock()
					claims[it.MessageID]++
					th := threadOf[it.MessageID]
					if it.MessageID < last[th] {
						t.Errorf("message %d of %s claimed after %d was done", it.MessageID, th, last[th])
					}
					last[th] = it.MessageID
					mu.Unlock()
					if err := ob.Done(ctx, it, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for id := range threadOf {
		if claims[id] != 1 {
			t.Errorf("message %d claimed %d times, want once", id, claims[id])
		}
	}
	if n, _ := obs[0].Pending(ctx); n != 0 {
		t.Errorf("%d rows left in the outbox", n)
	}
}

// The mirror's tables moved from agent-mail's migration 0003_mirror.sql
// (now empty) into the mirror's own 0001_outbox.sql. These tests hold the
// promises of that move on the engine under test: a store the earlier code
// filled keeps working with every row, and on a new store agent-mail
// creates none of the mirror's tables, the mirror's migration alone builds
// a working schema.

// applied reports whether db records migration version of component.
func applied(t *testing.T, db *store.DB, component, version string) bool {
	t.Helper()
	return count(t, db, `SELECT count(*) FROM schema_migrations WHERE component = ? AND version = ?`, component, version) == 1
}

// mirrorMigrations counts the mirror's recorded migrations.
func mirrorMigrations(t *testing.T, db *store.DB) int {
	t.Helper()
	return count(t, db, `SELECT count(*) FROM schema_migrations WHERE component = 'mirror'`)
}

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(db.Rebind(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// triggers counts the outbox triggers on am_messages: exactly one, or
// every message would be queued by each (and a missing one queues nothing).
func triggers(t *testing.T, db *store.DB) int {
	if db.Dialect == store.Postgres {
		return count(t, db, `SELECT count(*) FROM pg_trigger WHERE tgname = 'am_mirror_outbox_ai' AND tgrelid = 'am_messages'::regclass`)
	}
	return count(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'am_messages' AND name = 'am_mirror_outbox_ai'`)
}

// TestMigrateStoreOfEarlierCode: a store as the code before the mirror
// had migrations left it (agent-mail's 0003 applied, no "mirror"
// migration recorded, a registered sink with a backlog and a recorded
// message) opens under the mirror's migration with every row intact, and
// the mirror carries on from it: the backlog is mirrored, the recorded
// message is not mirrored again, new messages are queued once.
func TestMigrateStoreOfEarlierCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	first := e.send(t, "BlueLake", "before", "", "GreenCastle")
	second := e.send(t, "GreenCastle", "pending", "", "BlueLake")
	third := e.reply(t, "BlueLake", second)

	// What the earlier code wrote, with its statements: agent-mail's 0003
	// built the mirror's schema (the outbox's 0001_outbox.sql repeats it
	// line for line, each statement guarded: run here unrecorded, as 0003
	// ran then), then the sink's registration and backfill (outbox.Open),
	// then the first message mirrored and recorded (GmailSink's record,
	// Outbox.Done).
	if !applied(t, e.db, "agentmail", "0003_mirror.sql") {
		t.Fatal("agent-mail's 0003_mirror.sql is not recorded")
	}
	schema, err := os.ReadFile(filepath.Join("..", "outbox", "migrations", e.db.Dialect.String(), "0001_outbox.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.ExecContext(ctx, string(schema)); err != nil {
		t.Fatal(err)
	}
	if n := mirrorMigrations(t, e.db); n != 0 {
		t.Fatalf("%d mirror migrations recorded before the mirror ran", n)
	}
	for _, q := range []string{
		`INSERT INTO am_mirror_sinks (name, created_us) VALUES ('gmail', 1)`,
		`INSERT INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
			SELECT 'gmail', id, project_id, COALESCE(thread_id, CAST(id AS TEXT)) FROM am_messages`,
		`INSERT INTO am_mirror_gmail_messages (message_id, gmail_id, gmail_thread_id, rfc_message_id, mirrored_us)
			VALUES (?, 'gid-before', 'tid-before', '<before>', 2)`,
		`INSERT INTO am_mirror_gmail_threads (project_id, thread_key, gmail_thread_id)
			SELECT project_id, CAST(id AS TEXT), 'tid-before' FROM am_messages WHERE id = ?`,
		`DELETE FROM am_mirror_outbox WHERE message_id = ?`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{first}
		}
		if _, err := e.db.ExecContext(ctx, e.db.Rebind(q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// The code of today, in another process.
	db, svc := openStore(t, e.path)
	if err := outbox.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if n := mirrorMigrations(t, db); n != 1 || !applied(t, db, "mirror", "0001_outbox.sql") {
		t.Errorf("%d mirror migrations recorded, want 0001_outbox.sql alone", n)
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM am_mirror_sinks WHERE name = 'gmail' AND created_us = 1`:                                1,
		`SELECT count(*) FROM am_mirror_outbox WHERE sink = 'gmail'`:                                                  2,
		`SELECT count(*) FROM am_mirror_gmail_messages WHERE gmail_id = 'gid-before' AND rfc_message_id = '<before>'`: 1,
		`SELECT count(*) FROM am_mirror_gmail_threads WHERE gmail_thread_id = 'tid-before'`:                           1,
		`SELECT count(*) FROM am_mirror_outbox WHERE sink = 'gmail' AND message_id IN (` + ids(second, third) + `)`:   2,
	} {
		if got := count(t, db, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if n := triggers(t, db); n != 1 {
		t.Fatalf("%d outbox triggers on am_messages, want 1", n)
	}

	e.startGmail(t, db, svc, 0)
	fourth := e.send(t, "RedStone", "after", "", "BlueLake")
	waitDrained(t, db, mirror.GmailSinkName, drainWait)
	if n := e.gm.Calls("messages.insert"); n != 3 {
		t.Errorf("%d inserts, want 3 (the backlog and the new message; the recorded one is done)", n)
	}
	if n := count(t, db, `SELECT count(*) FROM am_mirror_gmail_messages WHERE message_id IN (`+ids(second, third, fourth)+`)`); n != 3 {
		t.Errorf("%d of the 3 new messages recorded", n)
	}
	if n := count(t, db, `SELECT count(*) FROM am_mirror_gmail_messages WHERE message_id = ? AND gmail_id = 'gid-before'`, first); n != 1 {
		t.Error("the message mirrored by the earlier code lost its record")
	}
}

// TestMigrateFreshStore: on a new store agent-mail's migrations create
// none of the mirror's tables, and the mirror's migration alone builds the
// schema the mirror works on: it migrates, queues and mirrors as ever.
func TestMigrateFreshStore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if n := triggers(t, e.db); n != 0 {
		t.Fatalf("%d outbox triggers on am_messages before the mirror started, want none", n)
	}
	if _, err := e.db.ExecContext(ctx, `SELECT count(*) FROM am_mirror_outbox`); err == nil {
		t.Fatal("agent-mail's migrations still create the mirror's outbox")
	}
	before := e.send(t, "BlueLake", "before the mirror", "", "GreenCastle")
	if _, err := outbox.Open(ctx, e.db, mirror.GmailSinkName, 0); err != nil {
		t.Fatal(err)
	}
	if n := mirrorMigrations(t, e.db); n != 1 || !applied(t, e.db, "mirror", "0001_outbox.sql") {
		t.Errorf("%d mirror migrations recorded, want 0001_outbox.sql alone", n)
	}
	if n := triggers(t, e.db); n != 1 {
		t.Fatalf("%d outbox triggers on am_messages, want 1", n)
	}
	after := e.send(t, "GreenCastle", "after", "", "BlueLake")
	reply := e.reply(t, "BlueLake", after)
	e.startGmail(t, e.db, e.svc, 0)
	waitDrained(t, e.db, mirror.GmailSinkName, drainWait)
	assertExactlyOnce(t, e, []int64{before, after, reply})
}

func ids(ns ...int64) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ", ")
}
