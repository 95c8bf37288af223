package testutil

import "os"

// EnvFull names the variable that runs the stress, crash and leak tests at
// full size. `make test` sets it (MAILGATE_TEST_FULL=1): the suites that
// guard against rare interleavings (SIGKILL at random moments, many
// processes on one store, thousands of calls) need their size to find them.
// A plain `go test ./...` runs the same tests, with the same checks, on a
// smaller size, so the edit-test loop stays quick.
const EnvFull = "MAILGATE_TEST_FULL"

// Full reports whether this run is a full-size one (EnvFull set, as by
// `make test`).
func Full() bool { return os.Getenv(EnvFull) != "" }

// Size returns full in a full-size run (make test) and quick otherwise: the
// number of rounds, processes or calls of a stress test.
func Size(quick, full int) int {
	if Full() {
		return full
	}
	return quick
}
