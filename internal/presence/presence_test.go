package presence

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

func openDB(t *testing.T) *store.DB { return storetest.Open(t) }

// A registered server is live with what it recorded; its heartbeat moves;
// it is stale once the heartbeat stops for StaleAfter; Close removes it.
func TestRegisterLiveClose(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	clock := testutil.NewClock(t0)
	r, err := Register(ctx, db, Server{DevMode: false, SendLimit: 7, ApprovalMode: "content", Vault: "/v", Transport: "stdio", Tools: "email", Mailbox: "gmail", Version: "t"},
		Options{Interval: 5 * time.Millisecond, Now: clock.Now})
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
		s.Transport != "stdio" || s.Mailbox != "gmail" || !s.Started.Equal(t0) {
		t.Fatalf("row = %+v", s)
	}
	if live, _ := Live(ctx, db, t0.Add(StaleAfter)); len(live) != 0 {
		t.Fatalf("a heartbeat StaleAfter old is live: %v", live)
	}
	// The heartbeat follows the clock.
	later := t0.Add(time.Hour)
	clock.Set(later)
	testutil.Eventually(t, 20*time.Second, func() error {
		if live, err := Live(ctx, db, later); err != nil || len(live) != 1 {
			return fmt.Errorf("the heartbeat never moved: %v %v", live, err)
		}
		return nil
	})
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
}

// A row of this host whose process is gone is not live, however fresh.
func TestDeadProcessIsNotLive(t *testing.T) {
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
