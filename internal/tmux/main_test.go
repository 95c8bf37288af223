package tmux

import (
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMain keeps the tests' temporary files in memory (testutil.MemoryTemp).
func TestMain(m *testing.M) { testutil.Main(m) }
