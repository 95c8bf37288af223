package httpserver

import (
	"strconv"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// TestDefaultsAreTheContract: the defaults an empty Options falls back to
// are the configuration contract's (config.Vars), so a server built without
// the configuration (tests, benchmarks) behaves as `serve --http` does.
func TestDefaultsAreTheContract(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"AGENT_MAIL_PATH":            DefaultPath,
		"AGENT_MAIL_HTTP_RATE_LIMIT": strconv.Itoa(int(DefaultRate)),
	} {
		if v, ok := config.Lookup(name); !ok || v.Default != want {
			t.Errorf("%s: the configuration's default is %q, httpserver's %q", name, v.Default, want)
		}
	}
}
