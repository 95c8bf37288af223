package mcpserver

import (
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMain runs the parallel tests four per core: each serves a session
// over a store, a vault and a local Gmail server, and mostly waits on them
// (on a loaded two-core machine, beside the old two at a time in the same
// minutes: 11-13 s against 17-23 s, the same CPU). The temporary files are
// on a memory filesystem (testutil.MemoryTemp).
func TestMain(m *testing.M) {
	testutil.WaitingParallel(4)
	testutil.FewerGCs(400)
	testutil.Main(m)
}
