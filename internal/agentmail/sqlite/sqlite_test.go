package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestMain doubles as the worker of TestMultiProcess: the test binary
// re-executes itself with AGENTMAIL_DB set, so several real processes
// write to one store file at once.
func TestMain(m *testing.M) { testutil.RunOrChild(m, "AGENTMAIL_DB", child) }

// handle opens the store file at path as one process would: its own
// store.DB, Store and Service. The indexer waits delay after a commit (0:
// its default).
func handle(tb testing.TB, path string, delay time.Duration) (*store.DB, *amsqlite.Store, *agentmail.Service) {
	tb.Helper()
	db := storetest.OpenDSN(tb, path)
	st, err := amsqlite.Open(context.Background(), db)
	if err != nil {
		tb.Fatal(err)
	}
	if delay != 0 {
		amsqlite.SetIndexDelay(st, delay)
	}
	svc, err := agentmail.New(st, agentmail.Options{})
	// Closed before the DB (cleanups run last-in first-out): Close stops
	// the indexer, which may still be writing when the temporary folder goes.
	return db, st, testutil.Closing(tb, svc, err)
}

// open is handle for tests that need only the Service.
func open(tb testing.TB, path string) *agentmail.Service {
	tb.Helper()
	_, _, svc := handle(tb, path, 0)
	return svc
}

// TestMultiProcess: several processes (this test binary re-executed) send
// concurrently to one recipient on one store file while reading inboxes;
// all messages arrive and no process sees an error. AGENTMAIL_STRESS=1 runs
// the figure: 8 processes × 500 sends.
func TestAgentMailMultiProcess(t *testing.T) {
	t.Parallel()
	procs, each := 4, testutil.Size(20, 60) // 60 sends each in make test (MAILGATE_TEST_FULL)
	if os.Getenv("AGENTMAIL_STRESS") != "" {
		procs, each = 8, 500
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := amtest.SQLite(t)
	svc := open(t, path)
	names := []string{"Sink"}
	for i := range procs {
		names = append(names, fmt.Sprintf("Proc%d", i))
	}
	amtest.Register(t, svc, "/shared", names...)
	start := time.Now()
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := testutil.ChildCommand(t, "AGENTMAIL_DB="+path, "AGENTMAIL_SENDER="+names[i+1], "AGENTMAIL_N="+strconv.Itoa(each))
			cmd.Stderr = nil // CombinedOutput collects it
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for i := range procs {
		if errs[i] != nil {
			t.Errorf("process %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	items, err := svc.FetchInbox(context.Background(), agentmail.InboxParams{ProjectKey: "/shared", Agent: "Sink", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var total int
	if err := svcCount(path, &total); err != nil {
		t.Fatal(err)
	}
	if total != procs*each {
		t.Fatalf("delivered %d of %d", total, procs*each)
	}
	_ = items
	t.Logf("%d processes × %d sends: %d delivered, 0 errors, %v (%.0f sends/s overall)", procs, each, total, elapsed.Round(time.Millisecond),
		float64(total)/elapsed.Seconds())
}

// svcCount counts the delivered copies in the store directly.
func svcCount(path string, n *int) error {
	db, err := store.Open(context.Background(), path)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(`SELECT count(*) FROM am_recipients r JOIN am_agents a ON a.id = r.agent_id WHERE a.name = 'Sink' AND r.delivered_us IS NOT NULL`).Scan(n)
}

// child sends AGENTMAIL_N messages to the store at path and reads the
// inbox after each one.
func child(path string) int {
	ctx := context.Background()
	db, svc := amtest.ChildAgentMail(ctx, path)
	defer db.Close()
	defer svc.Close()
	n, _ := strconv.Atoi(os.Getenv("AGENTMAIL_N"))
	sender := os.Getenv("AGENTMAIL_SENDER")
	for i := range n {
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/shared", Sender: sender, To: []string{"Sink"}, Subject: fmt.Sprintf("%s #%d", sender, i), BodyMD: "stress"}); err != nil {
			fmt.Fprintln(os.Stderr, "send:", err)
			return 1
		}
		if _, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/shared", Agent: "Sink", Limit: 20}); err != nil {
			fmt.Fprintln(os.Stderr, "fetch:", err)
			return 1
		}
	}
	return 0
}
