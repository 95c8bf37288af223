package amstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestCachedAgentsAcrossServers: two services (two pools, as two servers)
// share one store and one stopped clock. Sends, inbox reads and
// reservations resolve their agent through each service's cache of agents;
// what another server changes must still show:
//   - a sender's heartbeat is written whenever the one stored is a second
//     old, though the other server wrote some of them (a cache that moved its
//     copy forward on a send that wrote nothing would skip the last one);
//   - a recipient's contact policy set on the other server holds the next
//     send, though the sending server has that agent cached from its inbox;
//   - a name that did not resolve is not remembered: an agent registered on
//     the other server a moment later is found.
func TestCachedAgentsAcrossServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock, t0 := newFakeClock(), clockStart
	opts := agentmail.Options{Now: clock.now}
	dbs := handles(t, 2)
	a, b := service(t, dbs[0], opts), service(t, dbs[1], opts)
	amtest.Register(t, a, "/p", "Alice", "Bob")

	send := func(svc *agentmail.Service, at time.Duration, from, to string) agentmail.SendResult {
		t.Helper()
		clock.us.Store(t0.Add(at).UnixMicro())
		res, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: from, To: []string{to}, Subject: "s", BodyMD: "b"})
		if err != nil {
			t.Fatalf("send at +%s: %v", at, err)
		}
		return res
	}
	lastActive := func(name string) time.Time {
		t.Helper()
		w, err := a.Whois(ctx, "/p", name)
		if err != nil || w.LastActiveTS == nil {
			t.Fatalf("whois %s: %v", name, err)
		}
		at, err := agentmail.ParseTimestamp(*w.LastActiveTS)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}

	send(b, 2*time.Second, "Alice", "Bob")         // b caches Alice; her heartbeat is due
	send(a, 4*time.Second, "Alice", "Bob")         // written by a
	send(b, 4500*time.Millisecond, "alice", "Bob") // b's copy says +2s: written again (a name in any case)
	send(b, 5*time.Second, "Alice", "Bob")         // 0.5 s old: not written
	send(b, 5700*time.Millisecond, "Alice", "Bob") // 1.2 s old: written
	if got, want := lastActive("Alice"), t0.Add(5700*time.Millisecond); !got.Equal(want) {
		t.Errorf("Alice last active %s, want %s (a due heartbeat skipped)", got, want)
	}

	// b caches Bob through his inbox, then a blocks everyone on his behalf.
	if _, err := b.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetContactPolicy(ctx, "/p", "Bob", "block_all"); err != nil {
		t.Fatal(err)
	}
	if res := send(b, 7*time.Second, "Alice", "Bob"); len(res.Held) != 1 {
		t.Errorf("send to Bob after he blocked all on the other server: %d held, want 1 (a stale policy)", len(res.Held))
	}

	clock.us.Store(t0.Add(8 * time.Second).UnixMicro())
	if _, err := b.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Carol"}); !errors.Is(err, agentmail.ErrNotFound) {
		t.Fatalf("Carol's inbox before she registered: %v, want not found", err)
	}
	amtest.Register(t, a, "/p", "Carol")
	if _, err := b.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Carol"}); err != nil {
		t.Errorf("Carol's inbox on the other server once registered: %v", err)
	}
}
