package amstore_test

// The agent-mail store's behaviour, engine by engine: these tests run on
// SQLite by default and on PostgreSQL when MAILGATE_TEST_POSTGRES is set
// (see storetest). Tests that need two handles open the same store twice,
// which on PostgreSQL means two connection pools, as two servers would have.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// open returns a service over a fresh store.
func open(tb testing.TB, opts agentmail.Options) *agentmail.Service {
	tb.Helper()
	return service(tb, amtest.DB(tb), opts)
}

// service builds a service over db.
func service(tb testing.TB, db *store.DB, opts agentmail.Options) *agentmail.Service {
	tb.Helper()
	return amtest.AgentMail(tb, db, opts)
}

// handles opens one fresh store n times: separate pools on one database.
func handles(tb testing.TB, n int) []*store.DB {
	tb.Helper()
	dsn := amtest.DSN(tb)
	dbs := make([]*store.DB, n)
	for i := range dbs {
		dbs[i] = storetest.OpenDSN(tb, dsn)
	}
	return dbs
}

func count(tb testing.TB, db *store.DB, query string) int {
	tb.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestAgentMailContactPolicies: for each policy and kind of sender, the
// message is delivered or held, and a held message is delivered, never
// lost, once the recipient approves the sender.
func TestAgentMailContactPolicies(t *testing.T) {
	t.Parallel()
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
			svc := open(t, agentmail.Options{})
			amtest.Register(t, svc, "/r", "Rcpt")
			senderProj := "/r"
			if !c.sameProject {
				senderProj = "/s"
			}
			amtest.Register(t, svc, senderProj, "Sender")
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

// TestAgentMailErrorsAreTyped: callers decide with errors.Is / errors.As.
func TestAgentMailErrorsAreTyped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	amtest.Register(t, svc, "/p", "GreenDog")
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

// TestAgentMailStoreErrors: the store reports a missing row as the bare
// ErrNotFound and a unique-constraint failure as ErrConflict, on either
// engine; agent names collide case-insensitively.
func TestAgentMailStoreErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := amtest.Store(t, storetest.Open(t))
	var p agentmail.Project
	err := st.Write(ctx, func(tx agentmail.Tx) error {
		p = agentmail.Project{Slug: "p", HumanKey: "/p", CreatedAt: time.Now()}
		if err := tx.InsertProject(ctx, &p); err != nil {
			return err
		}
		return tx.InsertAgent(ctx, &agentmail.Agent{ProjectID: p.ID, Name: "GreenDog", InceptionAt: time.Now(), LastActiveAt: time.Now(),
			AttachmentsPolicy: "auto", ContactPolicy: agentmail.PolicyAuto})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write(ctx, func(tx agentmail.Tx) error {
		return tx.InsertAgent(ctx, &agentmail.Agent{ProjectID: p.ID, Name: "greendog", InceptionAt: time.Now(), LastActiveAt: time.Now(),
			AttachmentsPolicy: "auto", ContactPolicy: agentmail.PolicyAuto})
	})
	if !errors.Is(err, agentmail.ErrConflict) {
		t.Errorf("duplicate name (other case): %v, want ErrConflict", err)
	}
	err = st.Read(ctx, func(tx agentmail.Tx) error {
		a, err := tx.AgentByName(ctx, p.ID, "GREENDOG")
		if err != nil || a.Name != "GreenDog" {
			t.Errorf("AgentByName folds case = %+v, %v", a, err)
		}
		if _, err := tx.AgentByID(ctx, 9999); err != agentmail.ErrNotFound {
			t.Errorf("missing agent: %v, want the bare ErrNotFound", err)
		}
		if _, err := tx.MessageByID(ctx, 9999); err != agentmail.ErrNotFound {
			t.Errorf("missing message: %v, want the bare ErrNotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAgentMailConcurrentGoroutines: many goroutines of one process send
// and read at once; every message arrives and no call fails.
func TestAgentMailConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	// 8 × 40 rounds in make test (MAILGATE_TEST_FULL), 8 × 12 in a quick
	// run: the same eight goroutines racing, fewer rounds each.
	const workers = 8
	each := testutil.Size(12, 40)
	names := []string{"Sink"}
	for i := range workers {
		names = append(names, fmt.Sprintf("Worker%d", i))
	}
	amtest.Register(t, svc, "/p", names...)
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

// TestAgentMailReservationRaceAcrossHandles: two servers (separate pools)
// reserve the same path exclusively at the same instant, round after
// round. Reservations are advisory, so both are granted, but never both
// silently: at least one of them must report the other as a conflict.
func TestAgentMailReservationRaceAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := handles(t, 2)
	svcs := []*agentmail.Service{service(t, dbs[0], agentmail.Options{}), service(t, dbs[1], agentmail.Options{})}
	amtest.Register(t, svcs[0], "/p", "Alpha", "Beta")
	agents := []string{"Alpha", "Beta"}
	rounds := testutil.Size(10, 40) // 40 in make test (MAILGATE_TEST_FULL)
	if testing.Short() {
		rounds = 10
	}
	oneWinner := 0
	for round := range rounds {
		path := fmt.Sprintf("src/file%d.go", round)
		var wg sync.WaitGroup
		start := make(chan struct{})
		res := make([]agentmail.ReserveResult, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				<-start
				res[i], errs[i] = svcs[i].Reserve(ctx, agentmail.ReserveParams{ProjectKey: "/p", Agent: agents[i], Paths: []string{path}})
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, agents[i], err)
			}
			if len(res[i].Granted) != 1 {
				t.Fatalf("round %d: %s granted %+v", round, agents[i], res[i].Granted)
			}
		}
		clean0, clean1 := len(res[0].Conflicts) == 0, len(res[1].Conflicts) == 0
		if clean0 && clean1 {
			t.Fatalf("round %d: both agents got %s exclusively with no conflict reported", round, path)
		}
		if clean0 != clean1 {
			oneWinner++
		}
	}
	t.Logf("%s: %d of %d rounds had exactly one clean winner, the rest reported conflicts on both sides", storetest.Engine(), oneWinner, rounds)
}

// TestAgentMailSendsAcrossHandles: several servers send to one recipient at
// once; every message is stored exactly once, with its own id.
func TestAgentMailSendsAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const nHandles, perHandle, each = 3, 2, 20
	dbs := handles(t, nHandles)
	svcs := make([]*agentmail.Service, nHandles)
	for i, db := range dbs {
		svcs[i] = service(t, db, agentmail.Options{})
	}
	names := []string{"Sink"}
	for i := range nHandles * perHandle {
		names = append(names, fmt.Sprintf("Sender%d", i))
	}
	amtest.Register(t, svcs[0], "/p", names...)
	var mu sync.Mutex
	ids := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, nHandles*perHandle*each)
	for w := range nHandles * perHandle {
		svc, sender := svcs[w%nHandles], names[w+1]
		wg.Go(func() {
			for i := range each {
				subject := fmt.Sprintf("%s #%d", sender, i)
				res, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: sender, To: []string{"Sink"}, Subject: subject, BodyMD: "load"})
				if err != nil {
					errs <- err
					continue
				}
				id := res.Deliveries[0].Payload.ID
				mu.Lock()
				if prev, dup := ids[id]; dup {
					errs <- fmt.Errorf("id %d given to %q and %q", id, prev, subject)
				}
				ids[id] = subject
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := nHandles * perHandle * each
	if len(ids) != want {
		t.Errorf("%d distinct ids, want %d", len(ids), want)
	}
	if n := count(t, dbs[0], `SELECT count(*) FROM am_messages`); n != want {
		t.Errorf("%d messages stored, want %d", n, want)
	}
	if n := count(t, dbs[0], `SELECT count(DISTINCT subject) FROM am_messages`); n != want {
		t.Errorf("%d distinct subjects stored, want %d (a message stored twice?)", n, want)
	}
	items, err := svcs[1].FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/p", Agent: "Sink", Limit: 1000})
	if err != nil || len(items) != want {
		t.Fatalf("inbox holds %d of %d (err %v)", len(items), want, err)
	}
}

// TestAgentMailStaleSweepAcrossHandles: two servers sweep stale channel
// agents at the same instant; each agent is retired once: one stale mark,
// one agent-stale broadcast.
func TestAgentMailStaleSweepAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	opts := agentmail.Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }}
	dbs := handles(t, 2)
	const stale = 2 * time.Minute
	chOpts := channels.Options{ProjectKey: "/proj", StaleAfter: stale, SweepInterval: 24 * time.Hour}
	chs := make([]*channels.Set, len(dbs))
	for i, db := range dbs {
		svc, st := amtest.AgentMailStore(t, db, opts)
		chs[i] = channels.New(svc, st.Channels(), chOpts)
	}
	rounds, perRound := testutil.Size(3, 8), 5 // 8 rounds in make test (MAILGATE_TEST_FULL)
	if testing.Short() {
		rounds = 3
	}
	total := 0
	for round := range rounds {
		for i := range perRound {
			if _, err := chs[i%2].Register(ctx, fmt.Sprintf("agent%d-%d", round, i), "coder"); err != nil {
				t.Fatal(err)
			}
		}
		clock.Add(int64(stale + time.Second))
		var wg sync.WaitGroup
		start := make(chan struct{})
		n := make([]int, 2)
		errs := make([]error, 2)
		for i := range chs {
			wg.Go(func() {
				<-start
				n[i], errs[i] = chs[i].Sweep(ctx)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if n[0]+n[1] != perRound {
			t.Fatalf("round %d: the sweeps retired %d + %d agents, want %d in all", round, n[0], n[1], perRound)
		}
		total += perRound
		if got := count(t, dbs[0], `SELECT count(*) FROM am_ch_agents WHERE stale_us IS NOT NULL`); got != total {
			t.Fatalf("round %d: %d agents marked stale, want %d", round, got, total)
		}
		if got := count(t, dbs[1], `SELECT count(*) FROM am_messages WHERE subject = '`+channels.StaleSubject+`'`); got != total {
			t.Fatalf("round %d: %d agent-stale broadcasts, want %d", round, got, total)
		}
	}
}

// TestAgentMailSearch: phrases, prefixes, AND/OR/NOT, column filters and
// odd input through the Service, with the same answers on both engines.
func TestAgentMailSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	amtest.Register(t, svc, "/p", "Alice", "Bob", "Carol")
	docs := []struct{ subject, body string }{
		{"Build failed on main", "POL-358 migration broke the deploy pipeline"},
		{"Deploy succeeded", "the migration ran cleanly after the fix"},
		{"Lunch", "pizza or sushi; build a team"},
		{"Migration plan", "We migrate tables next week"},
	}
	ids := make([]int64, len(docs))
	for i, d := range docs {
		res, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: d.subject, BodyMD: d.body})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.Deliveries[0].Payload.ID
	}
	search := func(q, viewer string, limit int) agentmail.SearchResult {
		t.Helper()
		res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: q, Agent: viewer, Limit: limit})
		if err != nil {
			t.Fatalf("Search(%q): %v", q, err)
		}
		return res
	}
	hits := func(res agentmail.SearchResult) []int64 {
		var out []int64
		for _, h := range res.Result {
			for i, id := range ids {
				if h.ID == id {
					out = append(out, int64(i))
				}
			}
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		q    string
		want []int64 // indexes into docs
	}{
		{`"build failed"`, []int64{0}},
		{`"failed build"`, nil},
		{`migrat*`, []int64{0, 1, 3}},
		{`migration`, []int64{0, 1, 3}},
		{`deploy AND migration`, []int64{0, 1}},
		{`deploy migration`, []int64{0, 1}},
		{`pizza OR sushi`, []int64{2}},
		{`pizza OR plan`, []int64{2, 3}},
		{`build NOT failed`, []int64{2}},
		{`(deploy OR lunch) NOT pipeline`, []int64{1, 2}},
		{`subject:migration`, []int64{3}},
		{`body:deploy`, []int64{0}},
		{`subject:deploy*`, []int64{1}},
		{`POL-358`, []int64{0}},
		{`pol-358`, []int64{0}},
		{`BUILD`, []int64{0, 2}},
		{`nothing-like-this`, nil},
	}
	for _, c := range cases {
		if got := hits(search(c.q, "", 20)); !slices.Equal(got, c.want) {
			t.Errorf("Search(%q) found docs %v, want %v", c.q, got, c.want)
		}
	}
	// A subject hit on the shortest document ranks first on either engine.
	if res := search("migration", "", 20); len(res.Result) == 0 || res.Result[0].ID != ids[3] {
		t.Errorf("Search(migration) ranks %+v first, want doc 3", res.Result)
	}
	if got := hits(search("migration", "Bob", 20)); len(got) != 3 {
		t.Errorf("Bob sees %v, want the 3 matches", got)
	}
	if got := hits(search("migration", "Carol", 20)); len(got) != 0 {
		t.Errorf("Carol, who got none of it, sees %v", got)
	}
	if got := search("migration", "", 2); len(got.Result) != 2 {
		t.Errorf("limit 2 gives %d hits", len(got.Result))
	}
	// Odd input is repaired or ignored, never an error.
	for _, q := range []string{`"unterminated`, `(((`, `*`, `NOT`, `a OR`, `subject:`, `it's`, `back\slash`, `O'Brien`, `:*A`,
		`!x & y`, `"x"*:*`, `a <-> b`, "\x00", "\xff", `'`, `''`, `\`, `"'"`, `subject:"'"`, strings.Repeat("w ", 3000), `NEAR(a b)`,
		`{a b}: c`, `-x`, `x:*`, `é*`, `日本`, `a@b.com`, `3.14`, `https://x.y/z`} {
		search(q, "", 20)
	}
}

// TestAgentMailSearchWindow: a query matching more than the ranking window
// is answered from its newest matches (the Window contract of
// MessageTx.Search), ranked by the query's words (a subject hit counts
// three) before the limit applies, with the hits kept whole (sender,
// recipients, thread), the same on both engines.
func TestAgentMailSearchWindow(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends 210 messages")
	}
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	amtest.Register(t, svc, "/p", "Alice", "Bob")
	var ids []int64
	for i := range 210 {
		subject := "bulk item " + strconv.Itoa(i)
		if i == 100 {
			subject = "bulk bulk bulk"
		}
		res, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: subject, BodyMD: "load", ThreadID: "T-" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Deliveries[0].Payload.ID)
	}
	res, err := svc.Search(ctx, agentmail.SearchParams{ProjectKey: "/p", Query: "bulk", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	got := amtest.HitIDs(res)
	want := slices.Clone(ids[len(ids)-4:])
	slices.Reverse(want)
	want = append([]int64{ids[100]}, want...)
	if !slices.Equal(got, want) {
		t.Fatalf("Search(bulk) = %v, want the subject with three hits, then the newest four %v", got, want)
	}
	first := res.Result[0]
	if first.Subject != "bulk bulk bulk" || first.From != "Alice" || len(first.To) != 1 || first.To[0] != "Bob" || first.ThreadID == nil || *first.ThreadID != "T-100" {
		t.Errorf("first hit = %+v, want the whole message", first)
	}
}

// TestAgentMailSearchLike: the LIKE fallback (Match "") is a
// case-insensitive substring search with LIKE's wildcards escaped.
func TestAgentMailSearchLike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t)
	svc := service(t, db, agentmail.Options{})
	amtest.Register(t, svc, "/p", "Alice", "Bob")
	for _, s := range []string{"Rate 100% done", "Rate 1000 done", "snake_case name", "snakeXcase name"} {
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: s, BodyMD: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	st := amtest.Store(t, db)
	err := st.Read(ctx, func(tx agentmail.Tx) error {
		p, err := tx.ProjectByHumanKey(ctx, "/p")
		if err != nil {
			return err
		}
		for _, c := range []struct {
			terms []string
			want  []string
		}{
			{[]string{"100%"}, []string{"Rate 100% done"}},
			{[]string{"snake_case"}, []string{"snake_case name"}},
			{[]string{"RATE", "done"}, []string{"Rate 1000 done", "Rate 100% done"}},
		} {
			ms, ranked, err := tx.Search(ctx, agentmail.SearchQuery{ProjectID: p.ID, Terms: c.terms, Limit: 10, Window: 200})
			if err != nil {
				return err
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.Subject)
			}
			if ranked || !slices.Equal(got, c.want) {
				t.Errorf("LIKE %q = %q (ranked %v), want %q newest first", c.terms, got, ranked, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAgentMailNamesCaseInsensitive: an agent is found whatever the case,
// keeps the spelling it registered with, and the other case cannot make a
// second agent.
func TestAgentMailNamesCaseInsensitive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	amtest.Register(t, svc, "/p", "GreenDog")
	w, err := svc.Whois(ctx, "/p", "greendog")
	if err != nil || w.Name != "GreenDog" {
		t.Fatalf("Whois(greendog) = %+v, %v", w, err)
	}
	if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: "/p", Name: "GREENDOG"}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Agents(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Agents) != 1 {
		t.Errorf("agents after registering GREENDOG: %+v", res.Agents)
	}
}

// TestAgentMailMessagesAfter: the cursor over a project's traffic returns
// the messages above the id given, oldest first, with sender, recipients,
// thread and subject and no body, only the project's own, at most the
// limit; an unknown project is an error.
func TestAgentMailMessagesAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := open(t, agentmail.Options{})
	amtest.Register(t, svc, "/w/app", "BlueLake", "GreenCastle", "RedStone")
	amtest.Register(t, svc, "/w/other", "GoldFox", "SilverOwl")
	send := func(project, from string, to []string, subject, thread string) {
		t.Helper()
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: project, Sender: from, To: to, Subject: subject, BodyMD: "secret body", ThreadID: thread}); err != nil {
			t.Fatal(err)
		}
	}
	send("/w/app", "BlueLake", []string{"GreenCastle"}, "first", "")
	send("/w/other", "GoldFox", []string{"SilverOwl"}, "elsewhere", "")
	send("/w/app", "GreenCastle", []string{"BlueLake", "RedStone"}, "second", "TKT-1")
	send("/w/app", "RedStone", []string{"BlueLake"}, "third", "TKT-1")

	all, err := svc.MessagesAfter(ctx, "/w/app", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range all {
		thread := ""
		if m.ThreadID != nil {
			thread = *m.ThreadID
		}
		got = append(got, fmt.Sprintf("%s>%s|%s|%s", m.From, strings.Join(m.To, ","), m.Subject, thread))
		if m.BodyMD != nil || m.CreatedTS == nil {
			t.Errorf("message %d: body %v, created %v", m.ID, m.BodyMD, m.CreatedTS)
		}
	}
	want := []string{"BlueLake>GreenCastle|first|", "GreenCastle>BlueLake,RedStone|second|TKT-1", "RedStone>BlueLake|third|TKT-1"}
	if !slices.Equal(got, want) {
		t.Fatalf("MessagesAfter(0) = %q, want %q", got, want)
	}
	rest, err := svc.MessagesAfter(ctx, "/w/app", all[0].ID, 100)
	if err != nil || len(rest) != 2 || rest[0].ID != all[1].ID {
		t.Fatalf("after the first: %v %+v", err, rest)
	}
	if one, err := svc.MessagesAfter(ctx, "/w/app", 0, 1); err != nil || len(one) != 1 || one[0].ID != all[0].ID {
		t.Fatalf("limit 1: %v %+v", err, one)
	}
	if none, err := svc.MessagesAfter(ctx, "/w/app", all[2].ID, 100); err != nil || len(none) != 0 {
		t.Fatalf("after the last: %v %+v", err, none)
	}
	if _, err := svc.MessagesAfter(ctx, "/w/nowhere", 0, 10); err == nil {
		t.Fatal("an unknown project listed no error")
	}
}
