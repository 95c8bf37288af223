package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/presence"
	"github.com/mailgate/mailgate/internal/store"
)

// printApprovalMode says what the running servers will do with an
// approval, from what they recorded in the store (internal/presence), never
// from this terminal's settings: the server that acts on an approval was
// started by an MCP client with the client's environment, and this terminal
// once promised "nothing is sent" while that server sent. When no live
// server reads this vault it says so, and what a server started with the
// home's settings would do. approving adds the line about the next call.
func printApprovalMode(ctx context.Context, w io.Writer, env *environment, cfg *config.Config, approving bool) {
	fmt.Fprintln(w)
	if approving {
		fmt.Fprintln(w, "The agent's next identical call acts on it, once.")
	}
	for _, l := range approvalModeLines(ctx, env, cfg, time.Now()) {
		fmt.Fprintln(w, l)
	}
}

func approvalModeLines(ctx context.Context, env *environment, cfg *config.Config, now time.Time) []string {
	servers, err := liveServers(ctx, cfg.DB, now)
	if err != nil {
		return append([]string{fmt.Sprintf("Cannot tell which mailgate servers are running (%v).", err)}, wouldDo(env, cfg)...)
	}
	var here []presence.Server
	others := 0
	for _, s := range servers {
		if s.Vault == cfg.VaultPath && slices.Contains(strings.Split(s.Tools, ","), config.ToolsEmail) {
			here = append(here, s)
		} else {
			others++
		}
	}
	if len(here) == 0 {
		first := fmt.Sprintf("No mailgate server with the email tools is running on this store (%s) for this vault.", store.Describe(cfg.DB))
		if others > 0 {
			first += fmt.Sprintf(" (%d other server(s) on this store serve other tools or another vault.)", others)
		}
		return append([]string{first}, wouldDo(env, cfg)...)
	}
	// Servers that would do the same thing are one line.
	type key struct {
		dev     bool
		mailbox string
		limit   int
		mode    string
	}
	var order []key
	groups := map[key][]presence.Server{}
	for _, s := range here {
		k := key{s.DevMode, s.Mailbox, s.SendLimit, s.ApprovalMode}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	// The slots the window has left, beside each limit (approvals_slots.go).
	slots := sendSlotsUsed(ctx, cfg, now)
	var lines []string
	if len(order) == 1 {
		k := order[0]
		lines = append(lines, fmt.Sprintf("%s: %s", describeServers(groups[k]), verdict(k.dev, k.mailbox, k.limit, k.mode, slotsLeft(k.limit, slots))))
	} else {
		lines = append(lines, fmt.Sprintf("%d servers are running on this vault with different settings; the one the agent's next call reaches decides:", len(here)))
		for _, k := range order {
			lines = append(lines, fmt.Sprintf("  %s: %s", describeServers(groups[k]), verdict(k.dev, k.mailbox, k.limit, k.mode, slotsLeft(k.limit, slots))))
		}
	}
	// The terminal's own settings are not what the servers use; when they
	// differ, say so, and where the setting belongs.
	var differ []string
	seen := map[string]bool{}
	for _, s := range here {
		for _, d := range []struct {
			name, terminal, server string
		}{
			{"DEV_MODE", fmt.Sprint(cfg.DevMode), fmt.Sprint(s.DevMode)},
			{"SEND_LIMIT_PER_HOUR", fmt.Sprint(cfg.SendLimit), fmt.Sprint(s.SendLimit)},
			{"APPROVAL_MODE", cfg.ApprovalMode, s.ApprovalMode},
		} {
			if d.terminal != d.server && !seen[d.name+d.server] {
				seen[d.name+d.server] = true
				differ = append(differ, fmt.Sprintf("%s=%s here, %s=%s in a running server", d.name, d.terminal, d.name, d.server))
			}
		}
	}
	if len(differ) > 0 {
		lines = append(lines, fmt.Sprintf("Note: this terminal's settings differ (%s): the server's came from its client's configuration or environment. "+
			"Keep settings in one place, the home's settings file %s (mailgate config set NAME VALUE), and remove them from the client's configuration.",
			strings.Join(differ, "; "), cfg.SettingsFile))
	}
	return lines
}

// describeServers is "1 server running (pid 123 on host, started …, stdio)"
// or "3 servers running (pids 1, 2, 3; …)".
func describeServers(ss []presence.Server) string {
	host, _ := os.Hostname()
	where := func(s presence.Server) string {
		if s.Host != host {
			return fmt.Sprintf("pid %d on %s", s.PID, s.Host)
		}
		return fmt.Sprintf("pid %d", s.PID)
	}
	if len(ss) == 1 {
		s := ss[0]
		return fmt.Sprintf("1 server running (%s, started %s, %s)", where(s), s.Started.Local().Format("2006-01-02 15:04"), s.Transport)
	}
	pids := make([]string, len(ss))
	for i, s := range ss {
		pids[i] = strings.TrimPrefix(where(s), "pid ")
	}
	return fmt.Sprintf("%d servers running (pids %s; the first started %s)", len(ss), strings.Join(pids, ", "), ss[0].Started.Local().Format("2006-01-02 15:04"))
}

// verdict is what a server with these settings does with an approved call,
// and the send slots it has left (slots).
func verdict(dev bool, mailbox string, limit int, mode, slots string) string {
	var v string
	switch {
	case mailbox == "sandbox": // whatever DEV_MODE says (openEmail)
		v = "sandbox mailbox — an approved email is \"sent\" into the local sandbox mailbox, whatever DEV_MODE says; nothing leaves this machine"
	case dev:
		v = "DEV_MODE=true — nothing is sent: the approved call runs every check and only says what it would have sent"
	case mailbox == "gmail":
		v = fmt.Sprintf("DEV_MODE=false — an approved email WILL be sent (at most %d per hour)", limit)
	default:
		v = fmt.Sprintf("DEV_MODE=false — an approved email WILL be sent, through the Gmail API at %s (at most %d per hour)", mailbox, limit)
	}
	v += "; " + slots
	if mode == "recipient" {
		v += "; APPROVAL_MODE=recipient: an approval matches on the recipient or thread alone, not the exact text"
	}
	return v
}

// wouldDo says what a server started now would do: one started by an MCP
// client reads the home's settings file, not this shell, so the shell's
// own overrides are named apart.
func wouldDo(env *environment, cfg *config.Config) []string {
	fileCfg := cfg
	if c, err := homeSettingsOnly(env, cfg); err == nil {
		fileCfg = c
	}
	var mode string
	if fileCfg.DevMode {
		mode = "send nothing (DEV_MODE=true)"
	} else {
		mode = fmt.Sprintf("SEND an approved email for real (DEV_MODE=false, at most %d per hour)", fileCfg.SendLimit)
	}
	lines := []string{fmt.Sprintf("A server started with the home's settings (%s) would %s, unless its client's configuration sets DEV_MODE itself.", cfg.SettingsFile, mode)}
	if fileCfg.DevMode != cfg.DevMode {
		lines = append(lines, fmt.Sprintf("This shell sets DEV_MODE=%t, which only servers started from this shell see.", cfg.DevMode))
	}
	return lines
}

// homeSettingsOnly loads the configuration as a client-started server sees
// it: the home and its settings file, none of this shell's settings.
func homeSettingsOnly(env *environment, cfg *config.Config) (*config.Config, error) {
	keep := map[string]bool{"HOME": true, "USERPROFILE": true}
	getenv := func(k string) string {
		if keep[k] {
			return env.getenv(k)
		}
		return ""
	}
	args := []string{"--home", cfg.Home}
	if cfg.EnvFile != "" {
		args = append(args, "--env-file", cfg.EnvFile)
	}
	return config.Load(flag.NewFlagSet("mode", flag.ContinueOnError), args, getenv, cfg.Home)
}

// liveServers lists the live servers on the store dsn names. A SQLite
// store that does not exist has none, and is not created.
func liveServers(ctx context.Context, dsn string, now time.Time) ([]presence.Server, error) {
	if !store.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, release, err := openStore(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer release()
	return presence.Live(ctx, db, now)
}

// refuseLiveServers fails when a server runs on the store dsn names: its
// files must not move under it.
func refuseLiveServers(ctx context.Context, dsn string) error {
	servers, err := liveServers(ctx, dsn, time.Now())
	if err != nil {
		return fmt.Errorf("checking for running servers on %s: %w", store.Describe(dsn), err)
	}
	if len(servers) > 0 {
		return fmt.Errorf("not moving anything: %s on %s; stop them first (quit Claude Desktop completely, end the agents' sessions)",
			strings.TrimSuffix(describeServers(servers), ")")+")", store.Describe(dsn))
	}
	return nil
}

// storeNoticeDays is how long `mailgate approvals` warns about a store
// created after emails were already in Done/.
const storeNoticeDays = 7

// printStoreNotice warns when the store is younger than the vault's
// history: files in Done/ written before the store's first migration mean
// the store that kept their history was lost (serve said so at WARN when it
// created the new one; see restoreHistory).
func printStoreNotice(ctx context.Context, w io.Writer, cfg *config.Config, now time.Time) {
	if !store.IsPostgres(cfg.DB) {
		if _, err := os.Stat(cfg.DB); err != nil {
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, release, err := openStore(ctx, cfg.DB)
	if err != nil {
		fmt.Fprintf(w, "\nWARNING: %v\n", err)
		return
	}
	defer release()
	created, err := db.CreatedAt(ctx)
	if err != nil || created.IsZero() || now.Sub(created) > storeNoticeDays*24*time.Hour {
		return
	}
	es, err := os.ReadDir(filepath.Join(cfg.VaultPath, approval.DirDone))
	if err != nil {
		return
	}
	older := 0
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(created) {
			older++
		}
	}
	if older > 0 {
		fmt.Fprintf(w, "\nWARNING: %s (It was created %s; the send-limit history was rebuilt from the audit log.)\n",
			storeLostText(store.Describe(cfg.DB), cfg.VaultPath, older), created.Local().Format("2006-01-02 15:04"))
	}
}
