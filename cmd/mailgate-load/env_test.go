package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestServerEnv: a spawned server gets a home of its own, and with -db the
// user's PG* variables and ~/.pgpass, which HOME no longer points at.
func TestServerEnv(t *testing.T) {
	t.Parallel()
	realHome := t.TempDir()
	if err := os.WriteFile(filepath.Join(realHome, ".pgpass"), []byte("127.0.0.1:55432:*:load:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"PATH=/usr/bin", "HOME=" + realHome, "PGPASSWORD=pw", "PGSSLMODE=disable", "MAILGATE_LOG_LEVEL=debug", "DEV_MODE=false"}
	const url = "postgres://load@127.0.0.1:55432/mailgate"
	bareHome := t.TempDir() // no .pgpass
	tests := []struct {
		name             string
		db, realHome     string
		environ          []string
		want, wantAbsent []string
	}{
		{"sqlite", "", realHome, environ,
			[]string{"PATH=/usr/bin", "HOME=/srv", "MAILGATE_HOME=/srv", "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_BEARER_TOKEN=tok", "MAILGATE_LOG_LEVEL=debug"},
			[]string{"PGPASSWORD=pw", "DEV_MODE=false", "PGPASSFILE=" + filepath.Join(realHome, ".pgpass")}},
		{"postgres", url, realHome, environ,
			[]string{"HOME=/srv", "MAILGATE_DB=" + url, "PGPASSWORD=pw", "PGSSLMODE=disable", "PGPASSFILE=" + filepath.Join(realHome, ".pgpass")},
			[]string{"DEV_MODE=false", "HOME=" + realHome}},
		{"PGPASSFILE set", url, realHome, append(slices.Clone(environ), "PGPASSFILE=/etc/pgpass"),
			[]string{"PGPASSFILE=/etc/pgpass"},
			[]string{"PGPASSFILE=" + filepath.Join(realHome, ".pgpass")}},
		{"no .pgpass", url, bareHome, environ,
			[]string{"PGPASSWORD=pw"},
			[]string{"PGPASSFILE=" + filepath.Join(bareHome, ".pgpass")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := serverEnv("/srv", "tok", tt.db, tt.environ, tt.realHome)
			for _, w := range tt.want {
				if !slices.Contains(env, w) {
					t.Errorf("missing %q in %q", w, env)
				}
			}
			for _, w := range tt.wantAbsent {
				if slices.Contains(env, w) {
					t.Errorf("unexpected %q in %q", w, env)
				}
			}
		})
	}
}
