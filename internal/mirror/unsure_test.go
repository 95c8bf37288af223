package mirror_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
)

// lateMailbox answers its first insert with a timeout and stores the copy
// only when the test says: Gmail finishing an insert after the client gave
// up on it.
type lateMailbox struct {
	mirror.Mailbox
	mu   sync.Mutex
	late func() error // the held insert, run by land
}

func (m *lateMailbox) Insert(ctx context.Context, raw []byte, threadID string, labelIDs []string) (mirror.Ref, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.late == nil {
		m.late = func() error {
			_, err := m.Mailbox.Insert(context.Background(), raw, threadID, labelIDs)
			return err
		}
		return mirror.Ref{}, fmt.Errorf("Post \"https://gmail.googleapis.com/...\": %w", context.DeadlineExceeded)
	}
	return m.Mailbox.Insert(ctx, raw, threadID, labelIDs)
}

func (m *lateMailbox) land(t *testing.T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.late(); err != nil {
		t.Fatal(err)
	}
}

// TestInsertWithUnknownOutcomeNotRepeated: an insert that timed out may
// still land in Gmail. Its row is tried again only a lease later, when the
// look-up the retry makes first finds the late copy, so the message is in
// Gmail once. With the old short backoff the retry looked too early, found
// nothing and inserted a second copy (seen in TestCrash under load).
func TestInsertWithUnknownOutcomeNotRepeated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.send(t, "BlueLake", "slow insert", "", "GreenCastle")
	ctx := context.Background()
	ob, err := outbox.Open(ctx, e.db, mirror.GmailSinkName, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var clock sync.Mutex
	ob.SetClock(func() time.Time { clock.Lock(); defer clock.Unlock(); return now })
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	mb := &lateMailbox{Mailbox: e.mb}
	w := outbox.NewWorker(ob, &mirror.GmailSink{DB: e.db, Messages: e.svc, Mailbox: mb}, fast)

	if err := w.Drain(ctx); err != nil { // the insert times out
		t.Fatal(err)
	}
	advance(time.Second) // past any backoff, well inside the lease
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	mb.land(t) // Gmail finishes the first insert
	advance(time.Minute)
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := ob.Pending(ctx); err != nil || n != 0 {
		t.Fatalf("outbox still holds %d rows (%v)", n, err)
	}
	assertExactlyOnce(t, e, []int64{id})
}
