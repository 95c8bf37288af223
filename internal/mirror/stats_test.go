package mirror_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/outbox"
)

// Stats reports each sink's backlog and the age of its oldest message,
// and an empty backlog once the sink has drained.
func TestStats(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	before := time.Now()
	if _, err := outbox.Open(ctx, e.db, "gmail", time.Minute); err != nil {
		t.Fatal(err)
	}
	e.send(t, "BlueLake", "one", "", "GreenCastle")
	e.send(t, "BlueLake", "two", "", "GreenCastle")
	stats, err := outbox.Stats(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Sink != "gmail" || stats[0].Depth != 2 || stats[0].Oldest.Before(before.Add(-time.Second)) {
		t.Fatalf("Stats = %+v, want gmail with 2 waiting since the first send", stats)
	}
	e.startGmail(t, e.db, e.svc, time.Minute)
	waitDrained(t, e.db, "gmail", drainWait)
	if stats, err = outbox.Stats(ctx, e.db); err != nil || len(stats) != 1 || stats[0].Depth != 0 || !stats[0].Oldest.IsZero() {
		t.Fatalf("after draining: %+v, %v", stats, err)
	}
}
