package amstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestGrantAndReleaseOwn: what a grant and a release write, on both
// engines (on PostgreSQL each is one statement, agentmail.ReservationWriter;
// on SQLite the transaction of Reserve and Release): a grant answers a
// reservation per distinct pattern in the order asked, extends the agent's
// own active one of the same pattern and exclusivity (never shortens it)
// and inserts the others; a release takes the agent's selected active
// reservations only, counted once; both write the agent's heartbeat.
func TestGrantAndReleaseOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock()
	db := storetest.Open(t)
	svc := service(t, db, agentmail.Options{Now: clock.now})
	amtest.Register(t, svc, "/p", "Alice", "Bob")
	f := false

	reserve := func(p agentmail.ReserveParams) agentmail.ReserveResult {
		t.Helper()
		p.ProjectKey = "/p"
		if p.Agent == "" {
			p.Agent = "Alice"
		}
		res, err := svc.Reserve(ctx, p)
		if err != nil {
			t.Fatalf("reserve %v: %v", p.Paths, err)
		}
		return res
	}
	release := func(p agentmail.SelectParams) int {
		t.Helper()
		p.ProjectKey, p.Agent = "/p", "Alice"
		res, err := svc.Release(ctx, p)
		if err != nil {
			t.Fatalf("release %+v: %v", p, err)
		}
		return res.Released
	}
	expires := func(g agentmail.GrantView) time.Time {
		t.Helper()
		at, err := agentmail.ParseTimestamp(*g.ExpiresTS)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}

	clock.advance(2 * time.Second)
	first := reserve(agentmail.ReserveParams{Paths: []string{"x/1", "x/2", "x/1"}, TTLSeconds: 120, Reason: "first"})
	if len(first.Granted) != 2 || first.Granted[0].PathPattern != "x/1" || first.Granted[1].PathPattern != "x/2" {
		t.Fatalf("first grant: %+v", first.Granted)
	}
	heartbeat := func() time.Time {
		t.Helper()
		w, err := svc.Whois(ctx, "/p", "Alice")
		if err != nil || w.LastActiveTS == nil {
			t.Fatalf("whois: %v", err)
		}
		at, err := agentmail.ParseTimestamp(*w.LastActiveTS)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	if at := heartbeat(); !at.Equal(clock.now()) {
		t.Fatalf("heartbeat after the grant: %s, want %s", at, clock.now())
	}
	reserve(agentmail.ReserveParams{Agent: "Bob", Paths: []string{"x/4"}}) // another agent's: never Alice's to extend or release

	clock.advance(10 * time.Second)
	second := reserve(agentmail.ReserveParams{Paths: []string{"x/3", "x/2", "x/1", "/p/x/3"}, TTLSeconds: 3600, Reason: "second"})
	g := second.Granted
	if len(g) != 3 || g[0].PathPattern != "x/3" || g[1].ID != first.Granted[1].ID || g[2].ID != first.Granted[0].ID {
		t.Fatalf("second grant: %+v (first %+v)", g, first.Granted)
	}
	if g[0].ID == first.Granted[0].ID || g[0].ID == first.Granted[1].ID || g[0].Reason != "second" || g[1].Reason != "first" {
		t.Fatalf("second grant: %+v", g)
	}
	want := clock.now().Add(time.Hour)
	for _, v := range g {
		if !expires(v).Equal(want) || !v.Exclusive {
			t.Fatalf("second grant: %+v expires %s, want %s", v, expires(v), want)
		}
	}

	clock.advance(time.Second)
	third := reserve(agentmail.ReserveParams{Paths: []string{"x/1"}, TTLSeconds: 60})
	if third.Granted[0].ID != first.Granted[0].ID || !expires(third.Granted[0]).Equal(want) {
		t.Fatalf("a shorter grant shortened the reservation: %+v, want expiry %s", third.Granted, want)
	}
	shared := reserve(agentmail.ReserveParams{Paths: []string{"x/1"}, Exclusive: &f})
	if id := shared.Granted[0].ID; id == first.Granted[0].ID || shared.Granted[0].Exclusive {
		t.Fatalf("a shared grant of an exclusively held pattern extended it: %+v", shared.Granted)
	}
	if n := count(t, db, "SELECT count(*) FROM am_reservations"); n != 5 {
		t.Fatalf("%d reservations stored, want 5 (x/1 twice, x/2, x/3, Bob's x/4)", n)
	}

	clock.advance(2 * time.Second)
	if n := release(agentmail.SelectParams{Paths: []string{"x/1"}}); n != 2 {
		t.Fatalf("release by path: %d released, want 2 (exclusive and shared)", n)
	}
	if at := heartbeat(); !at.Equal(clock.now()) {
		t.Fatalf("heartbeat after the release: %s, want %s", at, clock.now())
	}
	if n := release(agentmail.SelectParams{IDs: []int64{first.Granted[1].ID, first.Granted[0].ID}}); n != 1 {
		t.Fatalf("release by id: %d released, want 1 (x/1 was already)", n)
	}
	if n := release(agentmail.SelectParams{Paths: []string{"x/3"}, IDs: []int64{first.Granted[1].ID}}); n != 0 {
		t.Fatalf("release by path and id that select nothing together: %d released", n)
	}
	if n := release(agentmail.SelectParams{}); n != 1 {
		t.Fatalf("release all: %d released, want 1 (x/3)", n)
	}
	if n := release(agentmail.SelectParams{}); n != 0 {
		t.Fatalf("release all again: %d released", n)
	}
	if n := count(t, db, "SELECT count(*) FROM am_reservations WHERE released_us IS NULL"); n != 1 {
		t.Fatalf("%d reservations left unreleased, want Bob's only", n)
	}
}
