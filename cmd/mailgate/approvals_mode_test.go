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
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/presence"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
)

// Servers that would do different things with an approval are each named
// with what they would do; servers on another vault or without the email
// tools do not count; a stale row does not count.
func TestApprovalModeServersDiffer(t *testing.T) {
	parallel(t)
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

// Each account has its own send window: in a home with several accounts
// the servers' line names what each has left, not the default account's
// figure alone (which said nothing of the account that sends).
func TestApprovalSlotsPerAccount(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	home := t.TempDir()
	cfg := &config.Config{Home: home, VaultPath: filepath.Join(home, "vault"), DB: filepath.Join(home, "state.db"),
		SettingsFile: filepath.Join(home, ".env"), TokenFile: filepath.Join(home, "auth", "token.json"),
		DevMode: false, SendLimit: 10, ApprovalMode: "content"}
	if err := os.MkdirAll(filepath.Join(home, "auth", "accounts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "auth", "accounts", "work.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := presence.Register(ctx, db, presence.Server{Vault: cfg.VaultPath, Tools: "email", Transport: "stdio",
		ApprovalMode: "content", Mailbox: "gmail", SendLimit: 10}, presence.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for bucket, n := range map[string]int{gate.SendBucket("default"): 3, gate.SendBucket("work"): 2} {
		lim, err := ratelimit.NewBucket(ctx, db, bucket, 10, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		lim.SetMonotonic(ratelimit.SystemClock)
		for i := range n {
			if _, err := lim.Reserve(ctx, time.Now(), bucket+strconv.Itoa(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := &environment{getenv: func(string) string { return "" }}
	out := strings.Join(approvalModeLines(ctx, env, cfg, time.Now()), "\n")
	if want := "send slots left this hour: account default 7 of 10, account work 8 of 10"; !strings.Contains(out, want) {
		t.Errorf("lacks %q:\n%s", want, out)
	}
}
