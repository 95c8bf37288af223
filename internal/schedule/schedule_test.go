package schedule

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// TestTakeOnce: eight connections (as eight processes would hold) race to
// take each of ten due emails: each is taken exactly once, and what is not
// due is not listed. On SQLite, and on PostgreSQL under
// MAILGATE_TEST_POSTGRES.
func TestTakeOnce(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.DSN(t)
	var stores []*Store
	for range 8 {
		s, err := New(ctx, storetest.OpenDSN(t, dsn))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 11 {
		at := now.Add(-time.Minute)
		if i == 10 {
			at = now.Add(time.Hour) // not due
		}
		e := gate.ScheduledEmail{DoneName: fmt.Sprintf("d%02d.md", i), SendAt: at, Tool: "send_email", ContentSHA256: "c",
			Final:    approval.Request{Kind: approval.KindSend, To: "a@example.com", Subject: "s", Body: "b", SendAt: at},
			Prepared: gate.Prepared{Raw: []byte("raw\r\n"), ThreadID: ""}}
		if err := stores[0].Schedule(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	due, err := stores[3].Due(ctx, now)
	if err != nil || len(due) != 10 {
		t.Fatalf("due: %d, %v", len(due), err)
	}
	if string(due[0].Raw) != "raw\r\n" || due[0].Final.Subject != "s" || !due[0].Final.SendAt.Equal(now.Add(-time.Minute)) {
		t.Fatalf("kept as %+v", due[0])
	}
	var won atomic.Int64
	wins := make([]atomic.Int64, len(due))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for j, e := range due {
				ok, err := s.Take(ctx, e.DoneName, gate.LaterSending, fmt.Sprint("p", i), now)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
					wins[j].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for j := range wins {
		if n := wins[j].Load(); n != 1 {
			t.Errorf("%s taken %d times", due[j].DoneName, n)
		}
	}
	if left, _ := stores[0].Due(ctx, now.Add(2*time.Hour)); len(left) != 1 || left[0].DoneName != "d10.md" {
		t.Fatalf("left scheduled: %v", left)
	}
}
