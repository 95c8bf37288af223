package amstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// fakeClock is a stopped clock that the test moves.
type fakeClock struct{ us atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.UnixMicro(c.us.Load()).UTC() }
func (c *fakeClock) advance(d time.Duration) { c.us.Add(d.Microseconds()) }

// clockStart is where the tests' fake clocks start.
var clockStart = time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)

// newFakeClock is a fake clock stopped at clockStart.
func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.us.Store(clockStart.UnixMicro())
	return c
}

// TestAckEscalationTwoServersRace: two services (two connection pools, as
// two servers) share one store and one stopped clock. Each runs its
// escalation worker, and the test adds eight passes racing at once at each
// step. Moving the clock past the deadline gives each unacknowledged
// recipient exactly one reminder; past twice the deadline, the sender
// exactly one notice per recipient still silent, with the message's paths
// reserved once; an acknowledged copy escalates no further, and later
// passes add nothing.
func TestAckEscalationTwoServersRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock()
	const deadline = 10 * time.Minute
	opts := agentmail.Options{Now: clock.now, Escalation: agentmail.EscalationOptions{Deadline: deadline, Reserve: true}}
	dbs := handles(t, 2)
	svcs := []*agentmail.Service{service(t, dbs[0], opts), service(t, dbs[1], opts)}
	a := svcs[0]
	amtest.Register(t, a, "/p", "Alice", "Bob", "Carol", "Dave")

	send := func(to []string, subject, body string, ack bool) int64 {
		t.Helper()
		res, err := a.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: to, Subject: subject, BodyMD: body, AckRequired: ack})
		if err != nil {
			t.Fatal(err)
		}
		return res.Deliveries[0].Payload.ID
	}
	plan := send([]string{"Bob", "Carol"}, "Auth refactor", "I am changing `src/auth.go` and `docs/*.md`; see https://x.test and `make test`.", true)
	acked := send([]string{"Dave"}, "Acked in time", "ok", true)
	send([]string{"Bob"}, "No ack needed", "fyi", false)
	if _, err := a.Acknowledge(ctx, "/p", "Dave", acked); err != nil {
		t.Fatal(err)
	}

	wctx, stop := context.WithCancel(ctx)
	var workers sync.WaitGroup
	for _, s := range svcs {
		workers.Add(1)
		go func() { defer workers.Done(); s.RunEscalations(wctx, time.Millisecond) }()
	}
	defer func() { stop(); workers.Wait() }()

	race := func() agentmail.EscalationReport {
		t.Helper()
		var mu sync.Mutex
		var sum agentmail.EscalationReport
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := svcs[i%2].EscalateDue(ctx)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				sum.Reminders, sum.Notices, sum.Reservations = sum.Reminders+r.Reminders, sum.Notices+r.Notices, sum.Reservations+r.Reservations
				mu.Unlock()
			}()
		}
		wg.Wait()
		return sum
	}
	subjects := func(agent string) []string {
		t.Helper()
		es, err := a.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: agent, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			if strings.Contains(e.Subject, "acknowledge") || strings.HasPrefix(e.Subject, "Not acknowledged") {
				if e.AckRequired {
					t.Errorf("escalation %q asks for an acknowledgement itself", e.Subject)
				}
				if e.ThreadID == nil || *e.ThreadID != fmt.Sprint(plan) {
					t.Errorf("escalation %q is not in the message's thread %d: %v", e.Subject, plan, e.ThreadID)
				}
				out = append(out, e.Subject)
			}
		}
		slices.Sort(out)
		return out
	}
	want := func(agent string, subjects_ ...string) func() error {
		return func() error {
			if got := subjects(agent); !slices.Equal(got, subjects_) {
				return fmt.Errorf("%s's escalations: %q, want %q", agent, got, subjects_)
			}
			return nil
		}
	}

	clock.advance(deadline - time.Second)
	race()
	for _, who := range []string{"Alice", "Bob", "Carol", "Dave"} {
		if err := want(who)(); err != nil {
			t.Fatalf("before the deadline: %v", err)
		}
	}

	clock.advance(time.Second)
	race()
	reminder := "Reminder: please acknowledge: Auth refactor"
	testutil.Eventually(t, time.Minute, want("Bob", reminder))
	testutil.Eventually(t, time.Minute, want("Carol", reminder))
	if r := race(); r != (agentmail.EscalationReport{}) {
		t.Errorf("a pass after the reminders did %+v", r)
	}
	for _, who := range []string{"Bob", "Carol"} {
		if err := want(who, reminder)(); err != nil {
			t.Error(err)
		}
	}
	if err := want("Alice")(); err != nil {
		t.Errorf("the sender was told before twice the deadline: %v", err)
	}
	if _, err := a.Acknowledge(ctx, "/p", "Carol", plan); err != nil {
		t.Fatal(err)
	}

	clock.advance(deadline)
	race()
	testutil.Eventually(t, time.Minute, want("Alice", "Not acknowledged by Bob: Auth refactor"))
	clock.advance(time.Hour)
	if r := race(); r != (agentmail.EscalationReport{}) {
		t.Errorf("a pass after the notice did %+v", r)
	}
	for who, subs := range map[string][]string{"Alice": {"Not acknowledged by Bob: Auth refactor"}, "Bob": {reminder}, "Carol": {reminder}, "Dave": nil} {
		if err := want(who, subs...)(); err != nil {
			t.Error(err)
		}
	}
	rs, err := a.ListReservations(ctx, "/p", false)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range rs {
		if r.Agent != "Alice" || r.Exclusive || !strings.HasPrefix(r.Reason, "ack-escalation:") {
			t.Errorf("unexpected reservation %+v", r)
		}
		paths = append(paths, r.PathPattern)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"docs/*.md", "src/auth.go"}) {
		t.Errorf("reserved %q, want docs/*.md and src/auth.go once each", paths)
	}
}

// TestAckEscalationPerProjectDeadline: a project's own deadline replaces
// the default, and 0 turns escalation off for it.
func TestAckEscalationPerProjectDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newFakeClock()
	svc := open(t, agentmail.Options{Now: clock.now, Escalation: agentmail.EscalationOptions{
		Deadline: time.Hour, Deadlines: map[string]time.Duration{"/fast": time.Minute, "quiet": 0}}})
	for _, p := range []string{"/fast", "/slow", "/quiet"} {
		amtest.Register(t, svc, p, "Alice", "Bob")
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: p, Sender: "Alice", To: []string{"Bob"}, Subject: "s", BodyMD: "b", AckRequired: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		advance time.Duration
		want    agentmail.EscalationReport
	}{
		{time.Minute, agentmail.EscalationReport{Reminders: 1}}, // /fast
		{time.Minute, agentmail.EscalationReport{Notices: 1}},   // /fast (no paths named)
		{time.Hour, agentmail.EscalationReport{Reminders: 1}},   // /slow; /quiet never
		{time.Hour, agentmail.EscalationReport{Notices: 1}},     // /slow
		{24 * time.Hour, agentmail.EscalationReport{}},
	} {
		clock.advance(step.advance)
		got, err := svc.EscalateDue(ctx)
		if err != nil || got != step.want {
			t.Fatalf("after %v more: %+v, %v; want %+v", step.advance, got, err, step.want)
		}
	}
}

func TestParseDeadlines(t *testing.T) {
	t.Parallel()
	got, err := agentmail.ParseDeadlines(" 45m, /abs/backend=15m, web=2h ,quiet=off")
	if err != nil || got.Deadline != 45*time.Minute || len(got.Deadlines) != 3 || got.Deadlines["/abs/backend"] != 15*time.Minute ||
		got.Deadlines["web"] != 2*time.Hour || got.Deadlines["quiet"] != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := agentmail.ParseDeadlines("off"); err != nil || got.Deadline != 0 || len(got.Deadlines) != 0 {
		t.Fatalf("off: %+v %v", got, err)
	}
	for _, bad := range []string{"x", "=1m", "x=soon", "x=-1m", "30m,1h", "-5m"} {
		if _, err := agentmail.ParseDeadlines(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
