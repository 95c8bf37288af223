package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/mirror"
)

// TestClaim: leases keep concurrent claimers apart, a lapsed lease frees
// the row, and a thread's rows come out one at a time, in order.
func TestClaim(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, err := mirror.OpenOutbox(ctx, e.db, "test", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := e.send(t, "BlueLake", "t1", "", "GreenCastle")
	reply := e.reply(t, "GreenCastle", first)
	other := e.send(t, "RedStone", "t2", "", "BlueLake")

	db2, _ := openStore(t, e.path)
	b, err := mirror.OpenOutbox(ctx, db2, "test", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[int64]int{}
	var wg sync.WaitGroup
	for _, ob := range []*mirror.Outbox{a, b, a, b} {
		wg.Go(func() {
			items, err := ob.Claim(ctx, 10)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			for _, it := range items {
				got[it.MessageID]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	want := map[int64]int{first: 1, other: 1} // the reply waits for its thread's first message
	if len(got) != len(want) || got[first] != 1 || got[other] != 1 {
		t.Fatalf("claimed %v, want %v", got, want)
	}

	steps := []struct {
		name  string
		do    func() ([]mirror.Item, error)
		want  []int64
		tries int
	}{
		{"leased rows are not handed out again", func() ([]mirror.Item, error) { return a.Claim(ctx, 10) }, nil, 0},
		{"a lapsed lease frees the row", func() ([]mirror.Item, error) {
			time.Sleep(250 * time.Millisecond)
			return b.Claim(ctx, 10)
		}, []int64{first, other}, 2},
		{"the reply follows once the first is done", func() ([]mirror.Item, error) {
			if err := b.Done(ctx, mirror.Item{MessageID: first}, nil); err != nil {
				return nil, err
			}
			return a.Claim(ctx, 10)
		}, []int64{reply}, 1},
	}
	for _, s := range steps {
		items, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var ids []int64
		for _, it := range items {
			ids = append(ids, it.MessageID)
			if it.Attempts != s.tries {
				t.Errorf("%s: message %d attempts %d, want %d", s.name, it.MessageID, it.Attempts, s.tries)
			}
		}
		if len(ids) != len(s.want) || (len(ids) > 0 && ids[0] != s.want[0]) {
			t.Errorf("%s: claimed %v, want %v", s.name, ids, s.want)
		}
	}
	// Retry by a worker whose lease was taken over is ignored.
	if err := a.Retry(ctx, mirror.Item{MessageID: other}, time.Hour, errors.New("x")); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.Pending(ctx); n != 2 {
		t.Errorf("pending %d, want 2", n)
	}
}

// TestClaimManyWorkers: workers on four store handles (think: servers)
// drain one outbox at once. Every row is handed out exactly once, and a
// thread's rows in order: none is claimed before the one ahead of it in its
// thread is done.
func TestClaimManyWorkers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const threads, perThread = 6, 10
	threadOf := map[int64]string{}
	for i := range threads * perThread {
		th := fmt.Sprintf("thread-%d", i%threads)
		threadOf[e.send(t, "BlueLake", fmt.Sprintf("m%d", i), th, "GreenCastle")] = th
	}
	var obs []*mirror.Outbox
	for range 4 {
		db, _ := openStore(t, e.path)
		ob, err := mirror.OpenOutbox(ctx, db, "many", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, ob)
	}
	var mu sync.Mutex
	claims := map[int64]int{}
	last := map[string]int64{} // per thread, the last message done
	var wg sync.WaitGroup
	for w := range 8 {
		ob := obs[w%len(obs)]
		wg.Go(func() {
			for idle := 0; idle < 20; {
				items, err := ob.Claim(ctx, 2)
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 0 {
					idle++
					time.Sleep(5 * time.Millisecond)
					continue
				}
				idle = 0
				for _, it := range items {
					mu.Lock()
					claims[it.MessageID]++
					th := threadOf[it.MessageID]
					if it.MessageID < last[th] {
						t.Errorf("message %d of %s claimed after %d was done", it.MessageID, th, last[th])
					}
					last[th] = it.MessageID
					mu.Unlock()
					if err := ob.Done(ctx, it, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for id := range threadOf {
		if claims[id] != 1 {
			t.Errorf("message %d claimed %d times, want once", id, claims[id])
		}
	}
	if n, _ := obs[0].Pending(ctx); n != 0 {
		t.Errorf("%d rows left in the outbox", n)
	}
}
