package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

func queued(tb testing.TB, db *store.DB) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM am_fts_pending`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// indexed counts the messages the full-text index itself matches for q,
// without the catch-up a search does first.
func indexed(tb testing.TB, db *store.DB, q string) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM am_messages_fts WHERE am_messages_fts MATCH ?`, q).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// checkIndex checks the queue holds wantQueued messages and the index
// itself matches term in wantIndexed (when says at what point).
func checkIndex(tb testing.TB, db *store.DB, when string, wantQueued int, term string, wantIndexed int) {
	tb.Helper()
	if n := queued(tb, db); n != wantQueued {
		tb.Errorf("%s: %d messages queued, want %d", when, n, wantQueued)
	}
	if n := indexed(tb, db, term); n != wantIndexed {
		tb.Errorf("%s: the index matches %d messages for %q, want %d", when, n, term, wantIndexed)
	}
}

// alicesBob is a fresh store whose indexer waits an hour (the test
// indexes, or closes the store), with Alice and Bob registered in /p.
func alicesBob(tb testing.TB) (*store.DB, *amsqlite.Store, *agentmail.Service) {
	tb.Helper()
	db, st, svc := handle(tb, amtest.SQLite(tb), time.Hour)
	amtest.Register(tb, svc, "/p", "Alice", "Bob")
	return db, st, svc
}

// indexNow indexes the queue at once.
func indexNow(tb testing.TB, st *amsqlite.Store) {
	tb.Helper()
	if err := st.IndexPending(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

func send(tb testing.TB, svc *agentmail.Service, subject, body string) int64 {
	tb.Helper()
	res, err := svc.Send(context.Background(), agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: subject, BodyMD: body})
	if err != nil {
		tb.Fatal(err)
	}
	return res.Deliveries[0].Payload.ID
}

// TestSearchSeesQueuedMessages: a message stored by one process and not yet
// indexed (its indexer waits an hour) is found at once by another
// process's search, which indexes the queue first.
func TestSearchSeesQueuedMessages(t *testing.T) {
	t.Parallel()
	path := amtest.SQLite(t)
	dbA, _, a := handle(t, path, time.Hour)
	_, _, b := handle(t, path, time.Hour)
	amtest.Register(t, a, "/p", "Alice", "Bob")
	id := send(t, a, "Parser rewrite", "the tokenizer lands tomorrow")
	checkIndex(t, dbA, "after the send (indexing is deferred)", 1, "tokenizer", 0)
	res, err := b.Search(context.Background(), agentmail.SearchParams{ProjectKey: "/p", Query: "tokenizer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Result) != 1 || res.Result[0].ID != id || res.Diagnostics != nil {
		t.Fatalf("search from the other process = %+v, want message %d and no diagnostics", res, id)
	}
	if n := queued(t, dbA); n != 0 {
		t.Errorf("%d messages still queued after the search", n)
	}
}

// TestIndexerIndexesAfterCommit: with nobody searching, the process that
// stored messages indexes them its delay after the commit (an hour here,
// on the bubble's fake clock: no sleeping, no polling).
func TestIndexerIndexesAfterCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		db, _, svc := alicesBob(t)
		for _, s := range []string{"one", "two", "three"} {
			send(t, svc, "status "+s, "deploy window")
		}
		synctest.Wait()
		if n := queued(t, db); n != 3 {
			t.Fatalf("%d messages queued before the delay, want 3 (indexed too early)", n)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		checkIndex(t, db, "after the delay", 0, "deploy", 3)
	})
}

// TestCloseIndexesQueued: a Store that closes indexes what it queued
// rather than leave it to the next process.
func TestCloseIndexesQueued(t *testing.T) {
	t.Parallel()
	db, st, svc := alicesBob(t)
	send(t, svc, "handover", "release notes drafted")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, db, "after Close", 0, "drafted", 1)
}

// TestDeletingMessagesKeepsIndexIntact: deleting an indexed message removes
// it from the index; deleting a queued one only leaves the queue (an FTS5
// 'delete' of a row it never indexed corrupts an external-content index).
func TestDeletingMessagesKeepsIndexIntact(t *testing.T) {
	t.Parallel()
	db, st, svc := alicesBob(t)
	done := send(t, svc, "indexed", "alpha bravo")
	indexNow(t, st)
	waiting := send(t, svc, "queued", "alpha charlie")
	keep := send(t, svc, "kept", "delta echo")
	if _, err := db.Exec(`DELETE FROM am_recipients WHERE message_id IN (?, ?); DELETE FROM am_messages WHERE id IN (?, ?)`,
		done, waiting, done, waiting); err != nil {
		t.Fatal(err)
	}
	indexNow(t, st)
	if _, err := db.Exec(`INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("full-text index no longer matches its messages: %v", err)
	}
	if n := indexed(t, db, "alpha"); n != 0 {
		t.Errorf("the index still matches %d deleted messages", n)
	}
	res, err := svc.Search(t.Context(), agentmail.SearchParams{ProjectKey: "/p", Query: "delta"})
	if err != nil || len(res.Result) != 1 || res.Result[0].ID != keep {
		t.Errorf("search(delta) = %+v, %v; want message %d", res, err, keep)
	}
}

// TestDeferredIndexMigration: a store whose messages were indexed by the
// old synchronous trigger (migrations 0001–0003) keeps them searchable
// after 0004, next to messages stored since.
func TestDeferredIndexMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := oldAliceAndBob(t, "0003_mirror.sql",
		`INSERT INTO am_messages (project_id, sender_id, subject, body_md, created_us) VALUES (1, 1, 'Before', 'legacy widget', 0)`)
	db, _, svc := handle(t, path, time.Hour)
	newID := send(t, svc, "After", "modern widget")
	res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: "widget"})
	if err != nil {
		t.Fatal(err)
	}
	// Checked against the messages, so only once the queue is indexed.
	if _, err := db.Exec(`INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("index after the upgrade: %v", err)
	}
	got := amtest.HitIDs(res)
	if len(got) != 2 || !(got[0] == 1 || got[1] == 1) || !(got[0] == newID || got[1] == newID) {
		t.Errorf("search(widget) after the upgrade found %v, want 1 and %d", got, newID)
	}
}

// TestSearchFindsEverySendAcrossHandles: four handles on one file (as four
// processes) send and search at once; every message is found by a search on
// another handle started after its send returned, whatever the indexers of
// the four are doing meanwhile.
func TestSearchFindsEverySendAcrossHandles(t *testing.T) {
	t.Parallel()
	// 40 sends a handle in make test (MAILGATE_TEST_FULL), 15 in a quick run.
	const nHandles = 4
	each := testutil.Size(15, 40)
	path := amtest.SQLite(t)
	svcs := make([]*agentmail.Service, nHandles)
	for i := range svcs {
		_, _, svcs[i] = handle(t, path, time.Duration(i)*20*time.Millisecond) // indexers at different paces
	}
	amtest.Register(t, svcs[0], "/p", "Alice", "Bob")
	var wg sync.WaitGroup
	errs := make(chan error, nHandles*each)
	for w := range nHandles {
		wg.Go(func() {
			ctx := context.Background()
			for i := range each {
				word := fmt.Sprintf("token%dx%d", w, i)
				res, err := svcs[w].Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: "s", BodyMD: "body " + word})
				if err != nil {
					errs <- err
					return
				}
				id := res.Deliveries[0].Payload.ID
				found, err := svcs[(w+1)%nHandles].Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: word})
				if err != nil {
					errs <- err
					return
				}
				if len(found.Result) != 1 || found.Result[0].ID != id {
					errs <- fmt.Errorf("search(%s) on handle %d = %+v, want message %d", word, (w+1)%nHandles, found.Result, id)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPrefixIndexMigration: a store of an older mailgate (migrations
// 0001–0006: no prefix index, some messages indexed, one still queued)
// gets the prefix indexes on the next open: every message is found by a
// word and by a prefix, the index matches its messages, the queue is empty,
// and the table no longer merges on writes.
func TestPrefixIndexMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two messages indexed as that version's indexer did, one left queued.
	path := oldAliceAndBob(t, "0006_imports_attachments.sql", `INSERT INTO am_messages (project_id, sender_id, subject, body_md, created_us) VALUES
			(1, 1, 'Retry budget', 'the retries of the deploy', 0),
			(1, 1, 'Schema', 'a migration retrying twice', 0);
		INSERT INTO am_messages_fts (rowid, subject, body_md) SELECT m.id, m.subject, m.body_md FROM am_fts_pending p JOIN am_messages m ON m.id = p.message_id;
		DELETE FROM am_fts_pending;
		INSERT INTO am_messages (project_id, sender_id, subject, body_md, created_us) VALUES (1, 1, 'Queued', 'retro of the migration', 0);`)
	db, _, svc := handle(t, path, time.Hour)
	var schema string
	if err := db.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'am_messages_fts'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "prefix") {
		t.Fatalf("the upgraded index has no prefix index: %s", schema)
	}
	if n := queued(t, db); n != 0 {
		t.Errorf("%d messages still queued after the rebuild", n)
	}
	if _, err := db.Exec(`INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("index after the upgrade: %v", err)
	}
	var automerge string
	if err := db.QueryRow(`SELECT v FROM am_messages_fts_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != "0" {
		t.Errorf("automerge = %q, %v; want 0 (the indexer merges)", automerge, err)
	}
	newID := send(t, svc, "After", "retrofit the migration")
	for _, c := range []struct {
		q    string
		want []int64
	}{
		{"migration", []int64{2, 3, newID}},
		{"retr*", []int64{1, 2, 3, newID}},
		{"mig*", []int64{2, 3, newID}},
		{"re*", []int64{1, 2, 3, newID}},
		{"retry*", []int64{1, 2}},
		{`"the deploy"`, []int64{1}},
		{"retr* NOT migration", []int64{1}},
	} {
		res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: c.q})
		if err != nil {
			t.Fatal(err)
		}
		got := amtest.HitIDs(res)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("search(%s) after the upgrade = %v, want %v", c.q, got, c.want)
		}
	}
}

// TestWritesDoNotMergeTheIndex: indexing flushes a segment and merges
// nothing (so a search that brings the index up to date never waits for a
// merge); the indexer's merging brings the segments back to a few, and the
// index still matches its messages.
func TestWritesDoNotMergeTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, st, svc := alicesBob(t)
	segments := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(DISTINCT segid) FROM am_messages_fts_idx`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const flushes = 12 // under crisismerge (16), over usermerge (4)
	for i := range flushes {
		send(t, svc, fmt.Sprintf("note %d", i), "merging segments later")
		indexNow(t, st)
	}
	if n := segments(); n < flushes {
		t.Fatalf("%d segments after %d indexing transactions: a write merged", n, flushes)
	}
	if err := amsqlite.MergeSegments(st); err != nil {
		t.Fatal(err)
	}
	if n := segments(); n >= 4 {
		t.Errorf("%d segments after merging, want fewer than 4", n)
	}
	if _, err := db.Exec(`INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("index after merging: %v", err)
	}
	res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: "merg*", Limit: 50})
	if err != nil || len(res.Result) != flushes {
		t.Errorf("search(merg*) = %d hits, %v; want %d", len(res.Result), err, flushes)
	}
}

// TestSearchLeavesQueueItCannotMatch: a search none of whose terms occurs
// in the queued messages answers from the index as it is, leaving the queue
// to the indexer (no write on its read path); one that may match a queued
// message indexes the queue first and finds it.
func TestSearchLeavesQueueItCannotMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, st, svc := alicesBob(t)
	old := send(t, svc, "Deploy notes", "the canary rollout")
	indexNow(t, st)
	fresh := send(t, svc, "Schema review", "Café migration: naïve résumé")
	search := func(q string) []int64 {
		t.Helper()
		res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: q})
		if err != nil {
			t.Fatal(err)
		}
		return amtest.HitIDs(res)
	}
	for _, q := range []string{"canary", "deploy NOT schema", "roll*", `"canary rollout"`} {
		if got := search(q); !slices.Equal(got, []int64{old}) {
			t.Errorf("search(%s) = %v, want [%d]", q, got, old)
		}
		if n := queued(t, db); n != 1 {
			t.Fatalf("search(%s) indexed the queue (%d left), which it cannot match", q, n)
		}
	}
	if got := search("cafe OR nothing"); !slices.Equal(got, []int64{fresh}) {
		t.Errorf("search(cafe OR nothing) = %v, want [%d]", got, fresh)
	}
	if n := queued(t, db); n != 0 {
		t.Errorf("%d messages still queued after a search that may match them", n)
	}
}
