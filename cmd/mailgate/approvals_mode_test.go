package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/presence"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
)

// Servers that would do different things with an approval are each named
// with what they would do; servers on another vault or without the email
// tools do not count; a stale row does not count.
func TestApprovalModeServersDiffer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	cfg := &config.Config{Home: home, VaultPath: filepath.Join(home, "vault"), DB: filepath.Join(home, "state.db"),
		SettingsFile: filepath.Join(home, ".env"), DevMode: true, SendLimit: 10, ApprovalMode: "content"}
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	register := func(s presence.Server, now func() time.Time) {
		r, err := presence.Register(ctx, db, s, presence.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
	}
	email := presence.Server{Vault: cfg.VaultPath, Tools: "email,agentmail", Transport: "stdio", ApprovalMode: "content", Mailbox: "gmail", SendLimit: 10}
	sends, dev, other, agents, stale := email, email, email, email, email
	sends.DevMode, dev.DevMode = false, true
	other.Vault, other.DevMode = filepath.Join(home, "other"), false
	agents.Tools, agents.DevMode = "agentmail", false
	stale.DevMode, stale.SendLimit = false, 99
	register(sends, nil)
	register(dev, nil)
	register(other, nil)
	register(agents, nil)
	register(stale, func() time.Time { return time.Now().Add(-time.Hour) })

	// Three sends taken in the window: each limit says what it has left.
	lim, err := ratelimit.New(ctx, db, 10, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	lim.SetMonotonic(ratelimit.SystemClock)
	for i := range 3 {
		if _, err := lim.Reserve(ctx, time.Now(), "r"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}

	env := &environment{getenv: func(string) string { return "" }}
	out := strings.Join(approvalModeLines(ctx, env, cfg, time.Now()), "\n")
	t.Logf("approvals says:\n%s", out)
	for _, want := range []string{
		"2 servers are running on this vault with different settings",
		"DEV_MODE=false — an approved email WILL be sent (at most 10 per hour); 7 of 10 send slots left this hour",
		"DEV_MODE=true — nothing is sent",
		"only says what it would have sent; 7 of 10 send slots left this hour",
		"DEV_MODE=true here, DEV_MODE=false in a running server",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "at most 99 per hour") || strings.Count(out, "1 server running (pid "+strconv.Itoa(os.Getpid())) != 2 {
		t.Errorf("a stale server, or a wrong count:\n%s", out)
	}
}
