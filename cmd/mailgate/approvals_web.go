package main

import (
	"context"
	"fmt"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/approvalweb"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// approvalsWeb serves the local approval page (internal/approvalweb) until
// interrupted: on 127.0.0.1 at a random port, its URL (with its one-time
// secret) printed, and opened in the desktop's browser unless --no-open.
// The URL is printed to stdout only, never logged.
func approvalsWeb(ctx context.Context, env *environment, cfg *config.Config, v *approval.Vault, noOpen bool) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	alog, err := audit.Open(cfg.AuditDir)
	if err != nil {
		return fmt.Errorf("AUDIT_LOG_DIR %s: %w", cfg.AuditDir, err)
	}
	defer alog.Close()
	// A decision a killed page (or terminal) left half made is finished or
	// put back (approval.SweepTemp), so the list shows it.
	if _, err := v.SweepTemp(time.Hour); err != nil {
		fmt.Fprintf(env.stderr, "warning: sweeping the vault: %v\n", err)
	}
	srv, err := approvalweb.New(approvalweb.Options{
		Vault: v, Audit: alog, Attachments: cfg.AttachmentsDir,
		Status: func(ctx context.Context) []string { return approvalModeLines(ctx, env, cfg, time.Now()) },
		Check:  func(ctx context.Context, items []approval.Item) { markDead(ctx, cfg, v, items) },
	})
	if err != nil {
		return err
	}
	ln, url, err := srv.Listen("")
	if err != nil {
		return fmt.Errorf("starting the approval page: %w", err)
	}
	fmt.Fprintf(env.stdout, "The approval page for vault %s:\n\n  %s\n\n", v.Root(), url)
	fmt.Fprintln(env.stdout, "The address works once (its secret is exchanged for a cookie on first load) and only on this machine. Stop with Ctrl-C.")
	if !noOpen {
		if open := oauthflow.SystemBrowser(runtime.GOOS, env.getenv); open == nil {
			fmt.Fprintln(env.stdout, "No desktop browser to open here: open the address above yourself.")
		} else if err := open(url); err != nil {
			fmt.Fprintf(env.stdout, "Could not open a browser (%v): open the address above yourself.\n", err)
		}
	}
	return srv.Serve(ctx, ln)
}
