package amstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestReservationGrantsAcrossServersOneCleanWinner: six agents on three
// servers (separate pools) reserve overlapping patterns of one directory
// exclusively at the same instant, round after round. A grant reads the
// conflicts once its insert has committed (on PostgreSQL at READ
// COMMITTED, beside the others), so each sees every grant that committed
// before it, and in every round at most one agent is granted with no
// conflict reported: the first to commit. Grants that read the others'
// reservations before their own commit, unordered, would come out clean
// together.
func TestReservationGrantsAcrossServersOneCleanWinner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := handles(t, 3)
	svcs := make([]*agentmail.Service, len(dbs))
	for i, db := range dbs {
		svcs[i] = service(t, db, agentmail.Options{})
	}
	agents := []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"}
	amtest.Register(t, svcs[0], "/p", agents...)
	rounds := testutil.Size(12, 30) // 30 in make test (MAILGATE_TEST_FULL)
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		// Every pattern overlaps every other: the directory, a file in it,
		// the files of one extension in it.
		patterns := []string{"src/r%d/**", "src/r%d/a.go", "src/r%d/*.go"}
		var wg sync.WaitGroup
		start := make(chan struct{})
		res := make([]agentmail.ReserveResult, len(agents))
		errs := make([]error, len(agents))
		for i, agent := range agents {
			svc, path := svcs[i%len(svcs)], fmt.Sprintf(patterns[i%len(patterns)], round)
			wg.Go(func() {
				<-start
				res[i], errs[i] = svc.Reserve(ctx, agentmail.ReserveParams{ProjectKey: "/p", Agent: agent, Paths: []string{path}})
			})
		}
		close(start)
		wg.Wait()
		var clean []string
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, agents[i], err)
			}
			if len(res[i].Granted) != 1 {
				t.Fatalf("round %d: %s granted %+v", round, agents[i], res[i].Granted)
			}
			if len(res[i].Conflicts) == 0 {
				clean = append(clean, agents[i])
			} else if n := len(res[i].Conflicts[0].Holders); n > len(agents)-1 {
				t.Fatalf("round %d: %s: %d holders listed, more than the other agents", round, agents[i], n)
			}
		}
		if len(clean) > 1 {
			t.Fatalf("round %d (%s): %v were all granted overlapping exclusive reservations with no conflict reported", round, storetest.Engine(), clean)
		}
	}
}

// TestClaimAndGrantAcrossServers: a channel agent claims a file on one
// server while a mail agent reserves it on another, round after round.
// The claim refuses what is held and the grant lists what overlaps, so at
// least one side must see the other: never a claim granted beside a grant
// that reported no conflict. On PostgreSQL the claim queues on the
// project's reservation lock, which the grant's insert takes; without it
// the claim's snapshot can miss the grant while the grant reads before the
// claim commits.
func TestClaimAndGrantAcrossServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := handles(t, 2)
	svc0, st0 := amtest.AgentMailStore(t, dbs[0], agentmail.Options{})
	svc1 := service(t, dbs[1], agentmail.Options{})
	const project = "/p"
	set := channels.New(svc0, st0.Channels(), channels.Options{ProjectKey: project})
	amtest.Register(t, svc1, project, "Alpha")
	reg, err := set.Register(ctx, "Claimer", "coder")
	if err != nil {
		t.Fatal(err)
	}
	rounds := testutil.Size(12, 30) // 30 in make test (MAILGATE_TEST_FULL)
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		file := fmt.Sprintf("src/c%d.go", round)
		var wg sync.WaitGroup
		start := make(chan struct{})
		var claim channels.ClaimResult
		var grant agentmail.ReserveResult
		var cerr, gerr error
		wg.Go(func() {
			<-start
			claim, cerr = set.ClaimFiles(ctx, reg.AgentID, []string{file})
		})
		wg.Go(func() {
			<-start
			grant, gerr = svc1.Reserve(ctx, agentmail.ReserveParams{ProjectKey: project, Agent: "Alpha", Paths: []string{file}})
		})
		close(start)
		wg.Wait()
		if cerr != nil || gerr != nil {
			t.Fatalf("round %d: claim: %v; grant: %v", round, cerr, gerr)
		}
		if len(claim.Claimed) == 1 && len(grant.Conflicts) == 0 {
			t.Fatalf("round %d (%s): %s claimed and reserved by Alpha with no conflict reported on either side", round, storetest.Engine(), file)
		}
	}
}
