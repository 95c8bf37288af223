package testutil

import "testing"

// Closing is the end of a test helper that opens something: it fails the
// test if the opening failed, and otherwise closes c when the test ends.
// Cleanups run last-registered first, so what is opened on top of another
// (a service on a store) closes before it.
func Closing[C interface{ Close() error }](tb testing.TB, c C, err error) C {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}
