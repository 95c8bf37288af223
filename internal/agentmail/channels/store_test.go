package channels_test

// The set over a real store, engine by engine: SQLite by default, and
// PostgreSQL when MAILGATE_TEST_POSTGRES is set (see storetest), so the
// set's one body of SQL (sql.go) runs on both.

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// open returns the set over a fresh store, with a clock the test moves.
func open(t *testing.T) (*channels.Set, *atomic.Int64) {
	t.Helper()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	svc, st := amtest.AgentMailStore(t, storetest.Open(t),
		agentmail.Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	return channels.New(svc, st.Channels(), channels.Options{ProjectKey: "/proj", StaleAfter: 2 * time.Minute, SweepInterval: 24 * time.Hour}), &clock
}

// must(call())(t) is call's value, or the test's end with its error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestStoreMessagesAndChanges: every table of the set round-trips: agents,
// channel messages with their sender UUID (one channel, or all), change
// announcements (by anyone, or by one agent, after a time).
func TestStoreMessagesAndChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, clock := open(t)
	a := must(c.Register(ctx, "alice", "coder"))(t).AgentID
	b := must(c.Register(ctx, "bob", "reviewer"))(t).AgentID
	must(c.SendMessage(ctx, a, "", "hello", "to all"))(t)
	clock.Add(int64(time.Second))
	must(c.SendMessage(ctx, b, "backend", "api", "done"))(t)

	all := must(c.ReadMessages(ctx, a, "", ""))(t).Messages
	if len(all) != 2 || all[0].SenderID != a || all[0].Channel != channels.DefaultChannel || all[1].SenderID != b || all[1].Channel != "backend" {
		t.Fatalf("every channel: %+v", all)
	}
	one := must(c.ReadMessages(ctx, a, "", "backend"))(t).Messages
	if len(one) != 1 || one[0].Subject != "api" || one[0].Body != "done" {
		t.Fatalf("channel backend: %+v", one)
	}
	if later := must(c.ReadMessages(ctx, a, all[0].CreatedAt, ""))(t).Messages; len(later) != 1 || later[0].ID != all[1].ID {
		t.Fatalf("since the first: %+v", later)
	}

	must(c.AnnounceChange(ctx, a, "./a.go", "one"))(t)
	clock.Add(int64(time.Second))
	must(c.AnnounceChange(ctx, b, "b.go", "two"))(t)
	cs := must(c.GetChanges(ctx, "", ""))(t).Changes
	if len(cs) != 2 || cs[0].AgentID != a || cs[0].FilePath != "a.go" || cs[1].AgentID != b || cs[0].ID >= cs[1].ID {
		t.Fatalf("changes: %+v", cs)
	}
	if bs := must(c.GetChanges(ctx, "", b))(t).Changes; len(bs) != 1 || bs[0].Summary != "two" {
		t.Fatalf("changes by bob: %+v", bs)
	}
	if late := must(c.GetChanges(ctx, cs[0].AnnouncedAt, ""))(t).Changes; len(late) != 1 || late[0].ID != cs[1].ID {
		t.Fatalf("changes since the first: %+v", late)
	}
}

// TestStoreHeartbeatAndSweep: a heartbeat keeps an agent; a silent one is
// marked stale once, its claims released, and it can no longer act.
func TestStoreHeartbeatAndSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, clock := open(t)
	a := must(c.Register(ctx, "alice", "coder"))(t).AgentID
	b := must(c.Register(ctx, "bob", "coder"))(t).AgentID
	if got := must(c.ClaimFiles(ctx, b, []string{"x.go"}))(t); !slices.Equal(got.Claimed, []string{"x.go"}) {
		t.Fatalf("claim: %+v", got)
	}
	clock.Add(int64(time.Minute + 30*time.Second))
	must(c.Heartbeat(ctx, a))(t)
	clock.Add(int64(time.Minute))
	if n := must(c.Sweep(ctx))(t); n != 1 {
		t.Fatalf("sweep retired %d agents, want bob alone", n)
	}
	if n := must(c.Sweep(ctx))(t); n != 0 {
		t.Fatalf("second sweep retired %d agents", n)
	}
	if _, err := c.Heartbeat(ctx, b); err == nil {
		t.Fatal("a stale agent's heartbeat was accepted")
	}
	if claims := must(c.GetFileClaims(ctx, nil))(t).Claims; len(claims) != 0 {
		t.Fatalf("claims after the sweep: %+v", claims)
	}
	if got := must(c.ClaimFiles(ctx, a, []string{"x.go"}))(t); !slices.Equal(got.Claimed, []string{"x.go"}) {
		t.Fatalf("claim after the sweep: %+v", got)
	}
	ms := must(c.ReadMessages(ctx, a, "", channels.DefaultChannel))(t).Messages
	if len(ms) != 1 || ms[0].Subject != channels.StaleSubject || ms[0].SenderID != b {
		t.Fatalf("broadcast after the sweep: %+v", ms)
	}
}
