package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// twoServers opens one fresh store twice (two pools, as two servers), and
// returns a scope no other test uses (advisory locks are database-wide),
// taken always.
func twoServers(t *testing.T) (a, b *Store, db *store.DB, scope agentmail.Scope) {
	t.Helper()
	if storetest.PostgresURL() == "" {
		t.Skip("needs PostgreSQL (" + storetest.EnvPostgres + ")")
	}
	dsn := storetest.DSN(t)
	ctx := context.Background()
	db = storetest.OpenDSN(t, dsn)
	sa, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(ctx, storetest.OpenDSN(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	var r [6]byte
	rand.Read(r[:])
	return sa, sb, db, agentmail.Scope{Key: "test:" + hex.EncodeToString(r[:]), Always: true}
}

// waitingOn polls pg_locks until n connections wait for scope's lock.
func waitingOn(t *testing.T, db *store.DB, scope agentmail.Scope, n int) {
	t.Helper()
	k := uint64(scopeKey(scope.Key))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got int
		err := db.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objid = $2 AND objsubid = 1`,
			int64(k>>32), int64(k&0xffffffff)).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections wait for the scope's lock, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// holdScope runs a writer of scope on st that, once inside, holds the scope
// until release is called; done answers the writer's error.
func holdScope(st *Store, scope agentmail.Scope) (release func(), done <-chan error) {
	entered, released := make(chan struct{}), make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		errc <- st.WriteScoped(context.Background(), scope, func(agentmail.Tx) error {
			once.Do(func() { close(entered) })
			<-released
			return nil
		})
	}()
	<-entered
	return func() { close(released) }, errc
}

// TestWriteScopedQueuesAcrossServers: a writer of a scope on another server
// waits for the holder's commit before its transaction begins (it never
// runs alongside and fails), then runs.
func TestWriteScopedQueuesAcrossServers(t *testing.T) {
	t.Parallel()
	a, b, db, scope := twoServers(t)
	ctx := context.Background()
	release, first := holdScope(a, scope)
	secondRan := make(chan struct{})
	second := make(chan error, 1)
	go func() {
		second <- b.WriteScoped(ctx, scope, func(agentmail.Tx) error {
			select {
			case <-secondRan:
			default:
				close(secondRan)
			}
			return nil
		})
	}()
	waitingOn(t, db, scope, 1)
	select {
	case <-secondRan:
		t.Fatal("the second server's writer ran while the first held the scope")
	default:
	}
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	<-secondRan
}

// TestWriteScopedWaitersLeaveThePool: many writers queued on a scope do not
// take every connection of their pool: the server's other work goes on.
func TestWriteScopedWaitersLeaveThePool(t *testing.T) {
	t.Parallel()
	a, b, db, scope := twoServers(t)
	ctx := context.Background()
	release, held := holdScope(a, scope)
	var wg sync.WaitGroup
	const writers = 40 // more than a pool holds
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.WriteScoped(ctx, scope, func(agentmail.Tx) error { return nil })
		}()
	}
	waitingOn(t, db, scope, queueDepth)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Read(rctx, func(atx agentmail.Tx) error {
		var n int
		return atx.(*tx).queryRow(rctx, `SELECT 1`).Scan(&n)
	}); err != nil {
		t.Fatalf("a read on the server whose writers queue: %v", err)
	}
	release()
	<-held
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteScopedPanicReleasesTheScope: a writer that panics inside its
// transaction leaves the scope free for the next.
func TestWriteScopedPanicReleasesTheScope(t *testing.T) {
	t.Parallel()
	a, b, _, scope := twoServers(t)
	ctx := context.Background()
	func() {
		defer func() { recover() }()
		a.WriteScoped(ctx, scope, func(agentmail.Tx) error { panic("boom") })
	}()
	for _, st := range []*Store{b, a} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := st.WriteScoped(wctx, scope, func(agentmail.Tx) error { return nil })
		cancel()
		if err != nil {
			t.Fatalf("the scope after a panic: %v", err)
		}
	}
}

// TestTouchAgentAfterCommit: an agent's activity noted in a write is stored
// once the write commits, never earlier than what is there, and not at all
// when the write fails.
func TestTouchAgentAfterCommit(t *testing.T) {
	t.Parallel()
	a, _, _, scope := twoServers(t)
	ctx := context.Background()
	old := time.UnixMicro(time.Now().Add(-time.Hour).UnixMicro()).UTC()
	var ag agentmail.Agent
	if err := a.Write(ctx, func(atx agentmail.Tx) error {
		p := agentmail.Project{Slug: "p", HumanKey: "/p", CreatedAt: old}
		if err := atx.InsertProject(ctx, &p); err != nil {
			return err
		}
		ag = agentmail.Agent{ProjectID: p.ID, Name: "GreenDog", InceptionAt: old, LastActiveAt: old, AttachmentsPolicy: "auto", ContactPolicy: agentmail.PolicyAuto}
		return atx.InsertAgent(ctx, &ag)
	}); err != nil {
		t.Fatal(err)
	}
	lastActive := func() time.Time {
		var got agentmail.Agent
		if err := a.Read(ctx, func(atx agentmail.Tx) error {
			var err error
			got, err = atx.AgentByID(ctx, ag.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got.LastActiveAt
	}
	now := time.UnixMicro(time.Now().UnixMicro()).UTC()
	failed := errors.New("refused")
	if err := a.Write(ctx, func(atx agentmail.Tx) error { atx.TouchAgent(ctx, ag.ID, now); return failed }); !errors.Is(err, failed) {
		t.Fatal(err)
	}
	if got := lastActive(); !got.Equal(old) {
		t.Fatalf("after a failed write: last active %v, want %v", got, old)
	}
	for _, write := range []func(func(agentmail.Tx) error) error{
		func(fn func(agentmail.Tx) error) error { return a.Write(ctx, fn) },
		func(fn func(agentmail.Tx) error) error {
			return a.WriteScoped(ctx, agentmail.Scope{Key: scope.Key}, fn)
		},
		func(fn func(agentmail.Tx) error) error { return a.WriteScoped(ctx, scope, fn) },
	} {
		if err := write(func(atx agentmail.Tx) error { return atx.TouchAgent(ctx, ag.ID, now) }); err != nil {
			t.Fatal(err)
		}
		if got := lastActive(); !got.Equal(now) {
			t.Fatalf("after a touch: last active %v, want %v", got, now)
		}
		if err := write(func(atx agentmail.Tx) error { return atx.TouchAgent(ctx, ag.ID, old) }); err != nil {
			t.Fatal(err)
		}
		if got := lastActive(); !got.Equal(now) {
			t.Fatalf("an older touch moved last active back to %v", got)
		}
		now = now.Add(time.Second)
	}
}

// TestConcurrentSendsDoNotConflict: three sends open at once, each writing a
// message and its copy, commit without any of them running again. With a
// foreign key from the copies to am_messages, each check read the page of
// the primary key where every new id goes, which the others wrote: the
// second send became a pivot between the first and the third, and
// PostgreSQL failed it at commit (see 0006_message_fks.sql).
func TestConcurrentSendsDoNotConflict(t *testing.T) {
	t.Parallel()
	a, _, _, _ := twoServers(t)
	ctx := context.Background()
	now := time.Now()
	var p agentmail.Project
	var agents [2]agentmail.Agent
	if err := a.Write(ctx, func(atx agentmail.Tx) error {
		p = agentmail.Project{Slug: "p", HumanKey: "/p", CreatedAt: now}
		if err := atx.InsertProject(ctx, &p); err != nil {
			return err
		}
		for i, n := range []string{"GreenDog", "BlueLake"} {
			agents[i] = agentmail.Agent{ProjectID: p.ID, Name: n, InceptionAt: now, LastActiveAt: now, AttachmentsPolicy: "auto", ContactPolicy: agentmail.PolicyAuto}
			if err := atx.InsertAgent(ctx, &agents[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// One attempt each (Store.firstAttempt: no retry), so a lost race shows
	// as the error it is.
	const n = 3
	inserted := make([]chan error, n)  // send i has written its message (or failed to)
	commit := make([]chan struct{}, n) // send i may commit
	results := make([]chan error, n)
	for i := range n {
		inserted[i], commit[i], results[i] = make(chan error, 1), make(chan struct{}), make(chan error, 1)
		go func() {
			_, err := a.firstAttempt(ctx, own(func(atx agentmail.Tx) error {
				m := agentmail.Message{ProjectID: p.ID, SenderID: agents[0].ID, Subject: "s", BodyMD: "b", Importance: "normal", CreatedAt: now,
					Recipients: []agentmail.Recipient{{AgentID: agents[1].ID, Kind: agentmail.KindTo, DeliveredAt: now}}}
				err := atx.InsertMessage(ctx, &m)
				inserted[i] <- err
				if err == nil {
					<-commit[i]
				}
				return err
			}))
			results[i] <- err
		}()
		if err := <-inserted[i]; err != nil { // the sends write in order 0, 1, 2
			for j := range i {
				close(commit[j])
			}
			t.Fatalf("send %d could not write: %v", i, err)
		}
	}
	for _, i := range []int{2, 1, 0} { // and commit in the other order
		close(commit[i])
		if err := <-results[i]; err != nil {
			for _, j := range []int{2, 1, 0}[3-i:] {
				close(commit[j])
			}
			t.Fatalf("send %d: %v", i, err)
		}
	}
}
