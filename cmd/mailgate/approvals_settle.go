package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/store"
)

// settleForListing decides, before `mailgate approvals` lists the vault,
// the sends whose outcome no process recorded (gate.Settle: the audit log,
// then Sent by Message-ID), and says in plain words what it found and what
// it could not decide. Nothing is asked of Gmail when every outcome is known.
func settleForListing(ctx context.Context, w io.Writer, cfg *config.Config, v *approval.Vault) {
	us, err := v.Unsettled("")
	if err != nil || len(us) == 0 {
		return
	}
	log, err := audit.Open(cfg.AuditDir)
	if err != nil {
		fmt.Fprintf(w, "%d claimed email(s) have no recorded outcome; the audit log could not be opened to settle them: %v\n\n", len(us), err)
		return
	}
	defer log.Close()
	conn := gmail.NewAccounts(ctx, gmail.Options{CredentialsFile: cfg.CredentialsFile, TokenFile: cfg.TokenFile, Endpoint: cfg.GmailEndpoint,
		Logger: slog.New(slog.DiscardHandler)}, cfg.Home)
	g := &gate.Gate{Vault: v, Audit: log, Sent: mcpserver.SentLookup(mcpserver.GmailConnector(conn)), Logger: slog.New(slog.DiscardHandler)}
	r, err := g.Settle(ctx, "")
	for _, t := range r.Texts {
		fmt.Fprintln(w, "Settled "+t)
	}
	if r.Open > 0 {
		fmt.Fprintf(w, "%d claimed email(s) still have no known outcome: mailgate stopped between claiming and recording them, and Sent does not show them yet. "+
			"Do not approve them again before `mailgate approvals` says what became of them.", r.Open)
		if err != nil {
			fmt.Fprintf(w, " (Sent could not be checked: %v)", err)
		}
		fmt.Fprintln(w)
	}
	if len(r.Texts) > 0 || r.Open > 0 {
		fmt.Fprintln(w)
	}
}

// openLedger opens the request ledger of an existing store, so that the
// listings can tell a forged approval (no ledger entry) from a live one.
// No store yet (nothing was ever issued) or one that cannot be opened: nil,
// and the listings say what the files alone tell.
func openLedger(ctx context.Context, cfg *config.Config) (approval.Ledger, func()) {
	if !store.IsPostgres(cfg.DB) {
		if _, err := os.Stat(cfg.DB); err != nil {
			return nil, func() {}
		}
	}
	db, release, err := openStore(ctx, cfg.DB)
	if err != nil {
		return nil, func() {}
	}
	l, err := approval.NewStoreLedger(ctx, db)
	if err != nil {
		release()
		return nil, func() {}
	}
	return l, release
}

// markDead names the approvals in Approved/ that can never be used.
func markDead(ctx context.Context, cfg *config.Config, v *approval.Vault, items []approval.Item) {
	v.MarkDead(ctx, items, approval.DeadCheck{AttachmentsDir: cfg.AttachmentsDir})
}
