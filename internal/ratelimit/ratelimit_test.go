package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

var t0 = time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC)

func openLimiter(t *testing.T, path string, limit int) (*Limiter, *store.DB) {
	t.Helper()
	db := storetest.OpenDSN(t, path)
	l, err := New(context.Background(), db, limit, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return l, db
}

func TestRollingWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, _ := openLimiter(t, storetest.DSN(t), 3)
	steps := []struct {
		at        time.Duration // offset from t0
		wantRetry time.Duration // 0: reserved
	}{
		{0, 0},
		{10 * time.Minute, 0},
		{20 * time.Minute, 0},
		{30 * time.Minute, 30 * time.Minute}, // full until the t0 slot leaves
		{59*time.Minute + 59*time.Second, time.Second},
		{60 * time.Minute, 0}, // t0 slot expired exactly now
		{61 * time.Minute, 9 * time.Minute},
		{80 * time.Minute, 0},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		check, err := l.Check(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if check != s.wantRetry {
			t.Errorf("step %d: Check = %v, want %v", i, check, s.wantRetry)
		}
		r, err := l.Reserve(ctx, now, fmt.Sprint("step", i))
		var le *LimitError
		switch {
		case s.wantRetry == 0 && err != nil:
			t.Errorf("step %d: Reserve: %v", i, err)
		case s.wantRetry != 0 && !errors.As(err, &le):
			t.Errorf("step %d: Reserve = %v, %v; want LimitError", i, r, err)
		case s.wantRetry != 0 && le.RetryAfter != s.wantRetry:
			t.Errorf("step %d: RetryAfter = %v, want %v", i, le.RetryAfter, s.wantRetry)
		}
	}
}

func TestLimitErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retry  time.Duration
		window time.Duration
		want   string
	}{
		{12 * time.Minute, time.Hour, "Rate limit exceeded (10 emails/hour). Next send available in 12 minutes."},
		{11*time.Minute + time.Second, time.Hour, "Rate limit exceeded (10 emails/hour). Next send available in 12 minutes."},
		{10 * time.Second, time.Hour, "Rate limit exceeded (10 emails/hour). Next send available in 1 minutes."},
		{0, 0, "Rate limit exceeded (10 emails/hour). Next send available in 1 minutes."},
		{90 * time.Second, 30 * time.Minute, "Rate limit exceeded (10 emails/30m0s). Next send available in 2 minutes."},
	} {
		e := &LimitError{Limit: 10, Window: tc.window, RetryAfter: tc.retry}
		if got := e.Error(); got != tc.want {
			t.Errorf("RetryAfter %v: %q, want %q", tc.retry, got, tc.want)
		}
	}
}

func TestReleaseGivesSlotBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, _ := openLimiter(t, storetest.DSN(t), 1)
	r, err := l.Reserve(ctx, t0, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, t0, "b"); err == nil {
		t.Fatal("second reservation accepted with limit 1")
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if _, err := l.Reserve(ctx, t0, "c"); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestLoweredLimitWaitsForEnoughSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.DSN(t)
	l5, _ := openLimiter(t, path, 5)
	for i := range 5 {
		if _, err := l5.Reserve(ctx, t0.Add(time.Duration(i)*time.Minute), "x"); err != nil {
			t.Fatal(err)
		}
	}
	l2, _ := openLimiter(t, path, 2)
	// Slots at 0..4 min; with limit 2, one frees when the slot at 3 min leaves.
	got, err := l2.Check(ctx, t0.Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if want := 53 * time.Minute; got != want {
		t.Fatalf("Check = %v, want %v", got, want)
	}
}

func TestSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.DSN(t)
	func() {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		l, err := New(ctx, db, 2, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := l.Reserve(ctx, t0, "before restart"); err != nil {
				t.Fatal(err)
			}
		}
	}()
	l, _ := openLimiter(t, path, 2)
	_, err := l.Reserve(ctx, t0.Add(45*time.Minute), "after restart")
	var le *LimitError
	if !errors.As(err, &le) || le.RetryAfter != 15*time.Minute {
		t.Fatalf("after reopen: %v, want LimitError retry 15m", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), storetest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct {
		limit  int
		window time.Duration
	}{{0, time.Hour}, {-1, time.Hour}, {1, 0}} {
		if _, err := New(context.Background(), db, tc.limit, tc.window); err == nil {
			t.Errorf("New(%d, %v) accepted", tc.limit, tc.window)
		}
	}
}

// Multi-process race: TestMain re-executes this binary as a reserving child.
const (
	childDB    = "MAILGATE_RL_CHILD_DB"
	childLimit = "MAILGATE_RL_CHILD_LIMIT"
	childN     = "MAILGATE_RL_CHILD_GOROUTINES"
)

func TestMain(m *testing.M) { testutil.RunOrChild(m, childDB, runChild) }

// runChild races n goroutines for a slot each and prints how many won.
func runChild(path string) int {
	ctx := context.Background()
	limit, _ := strconv.Atoi(os.Getenv(childLimit))
	n, _ := strconv.Atoi(os.Getenv(childN))
	db, err := store.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer db.Close()
	l, err := New(ctx, db, limit, time.Hour)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	won, failed := raceReserve(ctx, l, n)
	if failed != nil {
		fmt.Fprintln(os.Stderr, failed)
		return 1
	}
	fmt.Println(won)
	return 0
}

// raceReserve starts n goroutines reserving at the same instant and returns
// how many got a slot; any error other than a LimitError is returned.
func raceReserve(ctx context.Context, l *Limiter, n int) (int, error) {
	var (
		mu    sync.Mutex
		won   int
		first error
	)
	testutil.Race(n, func(int) {
		_, err := l.Reserve(ctx, t0, "race")
		var le *LimitError
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			won++
		case !errors.As(err, &le) && first == nil:
			first = err
		}
	})
	return won, first
}

func TestExactLimitInProcess(t *testing.T) {
	t.Parallel()
	l, _ := openLimiter(t, storetest.DSN(t), 7)
	won, err := raceReserve(context.Background(), l, 20)
	if err != nil {
		t.Fatal(err)
	}
	if won != 7 {
		t.Fatalf("won = %d, want 7", won)
	}
}

func TestExactLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	const procs, goroutines, limit = 2, 10, 7
	path := storetest.DSN(t)
	outs := make([]strings.Builder, procs)
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		c := testutil.ChildCommand(t, childDB+"="+path, childLimit+"="+strconv.Itoa(limit), childN+"="+strconv.Itoa(goroutines))
		c.Stdout = &outs[i]
		cmds[i] = c
	}
	testutil.RunChildren(t, cmds...)
	total := 0
	for i := range cmds {
		n, err := strconv.Atoi(strings.TrimSpace(outs[i].String()))
		if err != nil {
			t.Fatalf("child %d output %q", i, outs[i].String())
		}
		total += n
	}
	if total != limit {
		t.Fatalf("reserved across processes = %d, want exactly %d", total, limit)
	}
	_, db := openLimiter(t, path, limit)
	var rows int
	if err := db.QueryRow(`SELECT count(*) FROM ratelimit_slots`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != limit {
		t.Fatalf("rows = %d, want %d", rows, limit)
	}
}

// TestBucketsCountApart: a full organise bucket leaves sends free and the
// other way round, in one store, across a reopen.
func TestBucketsCountApart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := storetest.DSN(t)
	send, db := openLimiter(t, path, 1)
	org, err := NewBucket(ctx, db, BucketOrganize, 2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := org.Reserve(ctx, t0, "organise"); err != nil {
			t.Fatal(err)
		}
	}
	var le *LimitError
	if _, err := org.Reserve(ctx, t0, "organise"); !errors.As(err, &le) {
		t.Fatalf("third organise slot: %v, want LimitError", err)
	}
	if _, err := send.Reserve(ctx, t0, "send"); err != nil {
		t.Fatalf("a full organise bucket blocked a send: %v", err)
	}
	if _, err := send.Reserve(ctx, t0, "send"); !errors.As(err, &le) {
		t.Fatalf("second send: %v, want LimitError", err)
	}
	again, err := NewBucket(ctx, storetest.OpenDSN(t, path), BucketOrganize, 2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if retry, err := again.Check(ctx, t0.Add(time.Minute)); err != nil || retry != 59*time.Minute {
		t.Fatalf("organise bucket after reopen: retry %v, %v", retry, err)
	}
	if _, err := NewBucket(ctx, db, "", 2, time.Hour); err == nil {
		t.Fatal("a limiter without a bucket was made")
	}
}
