package amstore_test

import (
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMain: temporary files in memory, fewer collections (testutil.Main).
func TestMain(m *testing.M) { testutil.Main(m) }
