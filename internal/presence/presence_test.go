package presence

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

func openDB(t *testing.T) *store.DB { return storetest.Open(t) }

// A registered server is live with what it recorded; its heartbeat moves;
// it is stale once the heartbeat stops for StaleAfter; Close removes it.
// The bubble's fake clock drives the real heartbeat ticker: an hour passes
// at once, with no sleeping and no polling.
func TestRegisterLiveClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db := openDB(t)
		t0 := time.Now()
		r, err := Register(ctx, db, Server{DevMode: false, SendLimit: 7, ApprovalMode: "content", Vault: "/v", Transport: "stdio", Tools: "email", Mailbox: "gmail", Version: "t"},
			Options{})
		if err != nil {
			t.Fatal(err)
		}
		live, err := Live(ctx, db, t0)
		if err != nil || len(live) != 1 {
			t.Fatalf("live = %v, %v", live, err)
		}
		s := live[0]
		host, _ := os.Hostname()
		if s.ID != r.ID() || s.PID != os.Getpid() || s.Host != host || s.DevMode || s.SendLimit != 7 || s.Vault != "/v" ||
			s.Transport != "stdio" || s.Mailbox != "gmail" || !s.Started.Equal(t0.Truncate(time.Millisecond)) {
			t.Fatalf("row = %+v", s)
		}
		if live, _ := Live(ctx, db, t0.Add(StaleAfter)); len(live) != 0 {
			t.Fatalf("a heartbeat StaleAfter old is live: %v", live)
		}
		// The heartbeat follows the clock: an hour on, it is fresh.
		time.Sleep(time.Hour)
		synctest.Wait() // the beat due now has run
		if live, err := Live(ctx, db, time.Now()); err != nil || len(live) != 1 {
			t.Fatalf("the heartbeat never moved: %v %v", live, err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM presence_servers").Scan(&n); err != nil || n != 0 {
			t.Fatalf("rows after Close: %d %v", n, err)
		}
	})
}

// A row of this host whose process is gone is not live, however fresh.
func TestDeadProcessIsNotLive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	now := time.Now()
	r, err := Register(ctx, db, Server{Transport: "stdio", ApprovalMode: "content"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := db.ExecContext(ctx, db.Rebind("UPDATE presence_servers SET pid = ? WHERE id = ?"), cmd.Process.Pid, r.ID()); err != nil {
		t.Fatal(err)
	}
	if live, err := Live(ctx, db, now); err != nil || len(live) != 0 {
		t.Fatalf("a dead process is live: %v %v", live, err)
	}
}

// Rows stale for a day are deleted when the next server registers.
func TestOldRowsForgotten(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	old := time.Now().Add(-48 * time.Hour)
	r1, err := Register(ctx, db, Server{}, Options{Now: func() time.Time { return old }})
	if err != nil {
		t.Fatal(err)
	}
	r1.closing.Do(func() { close(r1.stop); <-r1.done }) // as if killed: the row stays
	r2, err := Register(ctx, db, Server{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM presence_servers").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows = %d %v, want the new one only", n, err)
	}
}
