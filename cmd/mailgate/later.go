package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/schedule"
	"github.com/mailgate/mailgate/internal/store"
)

// laterEvery is how often a server looks for scheduled emails that are due
// (send_at): an email leaves at most this long after its time.
const laterEvery = 20 * time.Second

// newLater lets the gate keep approved emails with a send time
// (internal/schedule) and returns the sender of those that are due, nil in
// DEV_MODE: there nothing is scheduled (the gate logs instead) and nothing
// kept earlier is sent; it waits for a server that may send.
func newLater(ctx context.Context, cfg *config.Config, db *store.DB, g *gate.Gate, logger *slog.Logger) (*gate.Later, error) {
	st, err := schedule.New(ctx, db)
	if err != nil {
		return nil, err
	}
	g.Scheduler, g.LateGrace = st, cfg.SendLaterGrace
	if g.DevMode {
		return nil, nil
	}
	host, _ := os.Hostname()
	return &gate.Later{Store: st, Vault: g.Vault, Limiter: g.Limiter, Audit: g.Audit, Grace: cfg.SendLaterGrace, Logger: logger,
		Owner: fmt.Sprintf("%s:%d", host, os.Getpid())}, nil
}

// runLater sends the due scheduled emails from this server every laterEvery
// until it stops (every server does; the store lets exactly one send each),
// over deps' mailbox, skipping passes while Gmail is not connected.
func runLater(ctx context.Context, l *gate.Later, deps *mcpserver.EmailDeps, a *app) {
	if l == nil {
		return
	}
	getGmail := deps.Gmail
	// Each email leaves from its own account (approval.Request.Account),
	// and waits while that account is not connected.
	l.Ready = func(ctx context.Context, acct string) error {
		_, err := getGmail(ctx, account.Resolve(acct))
		return err
	}
	l.Send = mcpserver.LaterSend(getGmail)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { l.Run(runCtx, laterEvery) })
	a.closers = append(a.closers, func() error { cancel(); wg.Wait(); return nil })
}
