package testutil

import (
	"flag"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// WaitingParallel is for the TestMain of a package whose parallel tests
// mostly wait (on the processes they start, on a server's answer, on the
// store's fsync) rather than compute: it lets factor × GOMAXPROCS of them
// run at once instead of go test's GOMAXPROCS, so that the cores do not
// idle while they wait (on two cores, two tests at a time left them
// mostly idle). The CPU spent is the same; an explicit -parallel wins.
// Call it before m.Run.
func WaitingParallel(factor int) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(factor*runtime.GOMAXPROCS(0)))
	}
}

// Queue runs a package's parallel tests a limited number at a time, like
// go test's -parallel, but the long ones first. go test resumes paused
// parallel tests in whatever order its goroutines wake (on go1.26: the
// first, then the rest in reverse source order), so a package's few long
// tests could start last and run on alone at the end while the cores idle:
// cmd/mailgate's browser test (~6 s) started 13 s into a 23 s run and
// ended it. Longest first keeps the tail short.
type Queue struct {
	mu      sync.Mutex
	free    int
	waiting []waiter
}

type waiter struct {
	rank  int
	ready chan struct{}
}

// NewQueue is for the TestMain of a package whose parallel tests call
// Queue.Parallel instead of t.Parallel: it takes over -test.parallel's
// limit (factor × GOMAXPROCS unless -parallel was given, as
// WaitingParallel) and lifts go test's own, so that every parallel test
// reaches the queue at once. Call it before m.Run.
func NewQueue(factor int) *Queue {
	WaitingParallel(factor)
	n, err := strconv.Atoi(flag.Lookup("test.parallel").Value.String())
	if err != nil || n < 1 {
		n = 1
	}
	if f := flag.Lookup("test.fuzz"); f == nil || f.Value.String() == "" {
		// (-parallel is also the number of fuzzing processes.)
		flag.Set("test.parallel", strconv.Itoa(math.MaxInt32))
	}
	return &Queue{free: n}
}

// Parallel is t.Parallel, then a wait for a free place: when one frees,
// the waiting test of the highest rank takes it (0 for most tests, more
// for the long ones: the longer, the higher), the earliest come among
// equals. The place is given back after the test's own cleanups have run
// (the processes it started are stopped by then).
func (q *Queue) Parallel(t *testing.T, rank int) {
	t.Helper()
	t.Parallel()
	q.mu.Lock()
	if q.free > 0 {
		q.free--
		q.mu.Unlock()
	} else {
		w := waiter{rank, make(chan struct{})}
		q.waiting = append(q.waiting, w)
		q.mu.Unlock()
		<-w.ready
	}
	t.Cleanup(q.release) // registered first, so run last
}

func (q *Queue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) == 0 {
		q.free++
		return
	}
	next := 0
	for i, w := range q.waiting {
		if w.rank > q.waiting[next].rank {
			next = i
		}
	}
	close(q.waiting[next].ready)
	q.waiting = slices.Delete(q.waiting, next, next+1)
}
