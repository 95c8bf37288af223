package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestMain doubles as the mirror process of TestCrash: the test binary
// re-executes itself with MIRROR_DB set. The tests run four at a time on
// two cores: the longest ones wait out leases.
func TestMain(m *testing.M) {
	testutil.WaitingParallel(2)
	testutil.RunOrChild(m, "MIRROR_DB", child)
}

// childLease is the killed child's lease. Long, as mailgate's minute is:
// each insert's deadline is three quarters of it, and with a one-second
// lease a loaded machine (-race, other packages) gave up on an insert the
// local Gmail then finished, and the child's own retry, whose look-up ran
// before that insert landed, inserted the message a second time (seen once
// in TestCrash/after_a_batch at load 17). The second process does not wait
// it out: see TestCrash.
const childLease = 20 * time.Second

// child mirrors the store at path (MIRROR_DB) into MIRROR_GMAIL and
// SIGKILLs itself right after insert number MIRROR_KILL_AFTER succeeded,
// before the insert is recorded: the worst moment for exactly-once.
func child(path string) int {
	ctx := context.Background()
	db, svc := amtest.ChildAgentMail(ctx, path)
	killAfter, _ := strconv.Atoi(os.Getenv("MIRROR_KILL_AFTER"))
	mb, err := gmail.New(ctx, gmail.Options{Endpoint: os.Getenv("MIRROR_GMAIL"),
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}),
		HTTPClient:  &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var n atomic.Int64
	sink := &mirror.GmailSink{DB: db, Messages: svc,
		Mailbox: mb,
		AfterInsert: func(int64) {
			if int(n.Add(1)) == killAfter {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
		}}
	stop, err := outbox.Start(ctx, db, sink, childLease, fast)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	time.Sleep(30 * time.Second) // killed long before
	stop()
	return 3
}

// TestCrash: a mirror process killed with SIGKILL between a Gmail insert
// and its record, at several points of the run; a second process (after the
// first one's leases lapse) finishes the job with no message lost and none
// inserted twice. The cases share nothing (a store, a local Gmail and a
// child each) and mostly wait out a lease: they run side by side.
func TestCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	tests := []struct {
		name      string
		killAfter int
	}{
		{"first insert", 1},
		{"mid run", 7},
		{"after a batch", 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var ids []int64
			first := e.send(t, "BlueLake", "crash thread", "", "GreenCastle")
			ids = append(ids, first)
			for i := range 15 {
				if i%3 == 0 {
					ids = append(ids, e.reply(t, "GreenCastle", first))
				} else {
					ids = append(ids, e.send(t, "RedStone", fmt.Sprintf("crash %d", i), "", "BlueLake"))
				}
			}
			// Register the sink before the child so both see the same rows.
			if _, err := outbox.Open(context.Background(), e.db, mirror.GmailSinkName, time.Second); err != nil {
				t.Fatal(err)
			}
			cmd := testutil.ChildCommand(t, "MIRROR_DB="+e.path, "MIRROR_GMAIL="+e.gm.URL(),
				"MIRROR_KILL_AFTER="+strconv.Itoa(tc.killAfter))
			cmd.Stderr = nil // CombinedOutput collects it
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die by SIGKILL: %v\n%s", err, out)
			}
			inserted := e.gm.Calls("messages.insert")
			var recorded int
			e.db.QueryRow(`SELECT count(*) FROM am_mirror_gmail_messages`).Scan(&recorded)
			if inserted < tc.killAfter || recorded >= inserted {
				t.Fatalf("crash happened at the wrong moment: %d inserts, %d recorded", inserted, recorded)
			}
			// The design lets a claim's lease (a minute in mailgate) outlast
			// the requests its holder had in flight when it died: a look-up
			// made while one of them is still being handled would miss it.
			// Wait for them, which is what the lease stands for, then take
			// the child's lease as lapsed (the second process's clock skips
			// it) rather than wait it out. In flight is not enough: a request
			// the child had written but the server not yet begun still
			// landed after the look-up (a duplicate, seen with the store on
			// tmpfs); its connection closes only once it is done, and this
			// process holds none to the local Gmail yet.
			testutil.Eventually(t, 20*time.Second, func() error {
				if n, c := e.gm.InFlight(), e.gm.OpenConns(); n > 0 || c > 0 {
					return fmt.Errorf("%d requests of the killed mirror still in flight, %d connections open", n, c)
				}
				return nil
			})
			clock := e.startGmailClock(t, time.Second)
			clock.skipped.Add(int64(childLease))
			waitDrained(t, e.db, "gmail", drainWait)
			assertExactlyOnce(t, e, ids)
		})
	}
}
