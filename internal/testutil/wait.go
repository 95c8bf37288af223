package testutil

import (
	"testing"
	"time"
)

// Eventually polls check every few milliseconds until it returns nil, and
// fails the test with check's last error once timeout has passed: for a
// state another goroutine or process reaches with no event to wait on (a
// worker's next poll, a child process's file). A generous timeout costs
// nothing when the state comes; the error says what was last seen.
//
// timeout is raised to minWait: it bounds a hung test, never a speed the
// test asks for, and a CI machine running the race suites of every package
// on two cores turned 10-20 s bounds on millisecond states into failures
// that named no error at all.
// minWait is the shortest bound Eventually keeps.
const minWait = 2 * time.Minute

func Eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	timeout = max(timeout, minWait)
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
