package amstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestSendAndApprovalAcrossServers: a sender in another project writes to
// an agent that takes mail from approved contacts only, on one server,
// while on another server the recipient approves the sender, at the same
// instant, round after round. A send decides held or delivered from the
// contact links it reads with the recipient (on PostgreSQL in one
// statement, agentmail.RecipientTx), and an approval delivers the held
// copies it sees; whichever commits second must see the other, so the
// message is in the inbox once both have answered. A send that read the
// links outside its serializable transaction, or either at READ
// COMMITTED, would leave some held after the approval.
func TestSendAndApprovalAcrossServers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbs := handles(t, 2)
	sender, approver := service(t, dbs[0], agentmail.Options{}), service(t, dbs[1], agentmail.Options{})
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		from, to := fmt.Sprintf("Sender%d", round), fmt.Sprintf("Rcpt%d", round)
		amtest.Register(t, sender, "/s", from)
		amtest.Register(t, sender, "/r", to)
		if _, err := sender.SetContactPolicy(ctx, "/r", to, string(agentmail.PolicyContactsOnly)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		var sent agentmail.SendResult
		var sendErr, approveErr error
		wg.Go(func() {
			<-start
			sent, sendErr = sender.Send(ctx, agentmail.SendParams{ProjectKey: "/s", Sender: from, To: []string{to + "@/r"}, Subject: "hello", BodyMD: "x"})
		})
		wg.Go(func() {
			<-start
			_, approveErr = approver.RespondContact(ctx, agentmail.ContactParams{ProjectKey: "/r", To: to, From: from, FromProj: "/s", Accept: true})
		})
		close(start)
		wg.Wait()
		if sendErr != nil || approveErr != nil {
			t.Fatalf("round %d: send: %v; approval: %v", round, sendErr, approveErr)
		}
		id := sent.Deliveries[0].Payload.ID
		items, err := approver.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: "/r", Agent: to, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, it := range items {
			found = found || it.ID == id
		}
		if !found {
			t.Fatalf("round %d (%s): the message stayed held after the approval (held at the send: %v)", round, storetest.Engine(), len(sent.Held) > 0)
		}
	}
}
