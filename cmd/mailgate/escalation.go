package main

import (
	"context"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
)

// escalationEvery is how often each serving process looks for overdue
// acknowledgements: a step is taken at most this late, and a pass that finds
// nothing is one indexed read.
const escalationEvery = 30 * time.Second

// escalationOptions reads AGENT_MAIL_ACK_DEADLINE and AGENT_MAIL_ACK_RESERVE
// (config.Load already checked the first).
func escalationOptions(cfg *config.Config) agentmail.EscalationOptions {
	o, _ := agentmail.ParseDeadlines(cfg.AckDeadline)
	o.Reserve = cfg.AckReserve
	return o
}

// startEscalations runs the ACK escalation worker until the app closes
// (before the service closes: closers run last to first). Every serving
// process runs one; the store makes each step happen once.
func startEscalations(a *app, svc *agentmail.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); svc.RunEscalations(ctx, escalationEvery) }()
	a.closers = append(a.closers, func() error { cancel(); wg.Wait(); return nil })
}
