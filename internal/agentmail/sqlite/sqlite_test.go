package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
)

// TestMain doubles as the worker of TestMultiProcess: the test binary
// re-executes itself with AGENTMAIL_CHILD set, so several real processes
// write to one store file at once.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTMAIL_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

func open(tb testing.TB, path string, opts agentmail.Options) *agentmail.Service {
	tb.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	svc, err := amsqlite.NewService(ctx, db, opts)
	if err != nil {
		tb.Fatal(err)
	}
	// Before the DB (cleanups run last-in first-out): Close stops the
	// indexer, which may still be writing when the temporary folder goes.
	tb.Cleanup(func() { svc.Close() })
	return svc
}

func setup(tb testing.TB, svc *agentmail.Service, project string, agents ...string) {
	tb.Helper()
	ctx := context.Background()
	if _, err := svc.EnsureProject(ctx, project); err != nil {
		tb.Fatal(err)
	}
	for _, a := range agents {
		if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: project, Name: a}); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestContactPolicies: for each policy and kind of sender, the message is
// delivered or held, and a held message is delivered, never lost, once the
// recipient approves the sender.
func TestAgentMailContactPolicies(t *testing.T) {
	cases := []struct {
		policy       agentmail.Policy
		sameProject  bool
		contactFirst bool
		delivered    bool
	}{
		{agentmail.PolicyOpen, false, false, true},
		{agentmail.PolicyAuto, true, false, true},
		{agentmail.PolicyAuto, false, false, false},
		{agentmail.PolicyAuto, false, true, true},
		{agentmail.PolicyContactsOnly, true, false, false},
		{agentmail.PolicyContactsOnly, true, true, true},
		{agentmail.PolicyBlockAll, true, false, false},
		{agentmail.PolicyBlockAll, true, true, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/same=%v/contact=%v", c.policy, c.sameProject, c.contactFirst)
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc := open(t, filepath.Join(t.TempDir(), "s.db"), agentmail.Options{})
			setup(t, svc, "/r", "Rcpt")
			senderProj := "/r"
			if !c.sameProject {
				senderProj = "/s"
			}
			setup(t, svc, senderProj, "Sender")
			if _, err := svc.SetContactPolicy(ctx, "/r", "Rcpt", string(c.policy)); err != nil {
				t.Fatal(err)
			}
			if c.contactFirst {
				if _, err := svc.RespondContact(ctx, agentmail.ContactParams{ProjectKey: "/r", To: "Rcpt", From: "Sender", FromProj: senderProj, Accept: true}); err != nil {
					t.Fatal(err)
				}
			}
			to := "Rcpt"
			if !c.sameProject {
				to = "Rcpt@/r"
			}
			res, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: senderProj, Sender: "Sender", To: []string{to}, Subject: "hello", BodyMD: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Held) == 0; got != c.delivered {
				t.Fatalf("delivered = %v, want %v (held: %+v)", got, c.delivered, res.Held)
			}
			id := res.Deliveries[0].Payload.ID
			inInbox := func() bool {
				items, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/r", Agent: "Rcpt", Limit: 100})
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					if it.ID == id {
						return true
					}
				}
				return false
			}
			if inInbox() != c.delivered {
				t.Fatalf("inbox disagrees with the send answer")
			}
			if c.delivered {
				return
			}
			// Held, not dropped: approving (or opening) delivers it.
			if c.policy == agentmail.PolicyBlockAll {
				if _, err := svc.SetContactPolicy(ctx, "/r", "Rcpt", "open"); err != nil {
					t.Fatal(err)
				}
			} else if _, err := svc.RespondContact(ctx, agentmail.ContactParams{ProjectKey: "/r", To: "Rcpt", From: "Sender", FromProj: senderProj, Accept: true}); err != nil {
				t.Fatal(err)
			}
			if !inInbox() {
				t.Fatal("held message not delivered after approval")
			}
		})
	}
}

// TestErrorsAreTyped: callers decide with errors.Is / errors.As.
func TestAgentMailErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	svc := open(t, filepath.Join(t.TempDir(), "s.db"), agentmail.Options{})
	setup(t, svc, "/p", "GreenDog")
	_, err := svc.Whois(ctx, "/p", "Nobody")
	var e *agentmail.Error
	if !errors.Is(err, agentmail.ErrAgentNotFound) || !errors.Is(err, agentmail.ErrNotFound) || !errors.As(err, &e) || e.Code != "NOT_FOUND" {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := svc.Whois(ctx, "/q", "GreenDog"); !errors.Is(err, agentmail.ErrProjectNotFound) {
		t.Errorf("unknown project: %v", err)
	}
	if _, err := svc.EnsureProject(ctx, "rel"); !errors.Is(err, agentmail.ErrInvalidArgument) {
		t.Errorf("relative path: %v", err)
	}
	c := &agentmail.ReservationConflict{Path: "src/a.go", Holders: []agentmail.Reservation{{AgentName: "X", PathPattern: "src/**"}}}
	if !errors.Is(c, agentmail.ErrReservationConflict) {
		t.Error("ReservationConflict does not unwrap to ErrReservationConflict")
	}
}

// TestConcurrentGoroutines: many goroutines of one process send and read at
// once; every message arrives and no call fails.
func TestAgentMailConcurrentGoroutines(t *testing.T) {
	ctx := context.Background()
	svc := open(t, filepath.Join(t.TempDir(), "s.db"), agentmail.Options{})
	const workers, each = 8, 40
	names := []string{"Sink"}
	for i := range workers {
		names = append(names, fmt.Sprintf("Worker%d", i))
	}
	setup(t, svc, "/p", names...)
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: names[w+1], To: []string{"Sink"}, Subject: "s" + strconv.Itoa(i), BodyMD: "b"}); err != nil {
					errs <- err
				}
				if _, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Sink", Limit: 5}); err != nil {
					errs <- err
				}
				if _, err := svc.Reserve(ctx, agentmail.ReserveParams{ProjectKey: "/p", Agent: names[w+1], Paths: []string{fmt.Sprintf("w%d/%d", w, i)}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	items, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Sink", Limit: 1000})
	if err != nil || len(items) != workers*each {
		t.Fatalf("delivered %d of %d (err %v)", len(items), workers*each, err)
	}
}

// TestMultiProcess: several processes (this test binary re-executed) send
// concurrently to one recipient on one store file while reading inboxes;
// all messages arrive and no process sees an error. AGENTMAIL_STRESS=1 runs
// the figure: 8 processes × 500 sends.
func TestAgentMailMultiProcess(t *testing.T) {
	procs, each := 4, 60
	if os.Getenv("AGENTMAIL_STRESS") != "" {
		procs, each = 8, 500
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "shared.db")
	svc := open(t, path, agentmail.Options{})
	names := []string{"Sink"}
	for i := range procs {
		names = append(names, fmt.Sprintf("Proc%d", i))
	}
	setup(t, svc, "/shared", names...)
	start := time.Now()
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "AGENTMAIL_CHILD=1", "AGENTMAIL_DB="+path, "AGENTMAIL_SENDER="+names[i+1], "AGENTMAIL_N="+strconv.Itoa(each))
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

// child sends AGENTMAIL_N messages and reads the inbox after each one.
func child() int {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv("AGENTMAIL_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	svc, err := amsqlite.NewService(ctx, db, agentmail.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
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
