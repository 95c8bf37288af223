package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/archive"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
)

// mirrorLease bounds how long a crashed process keeps other processes off
// the rows it had claimed; a healthy process finishes a row in well under
// a second.
const mirrorLease = time.Minute

// startMirror starts, as configured, the Gmail mirror (AGENT_MAIL_MIRROR=
// gmail) and the vault archive of agent mail (whenever an agent-mail tool
// set is served and the vault folder exists). Both are fed by the store's
// outbox and run in the background: agent calls never wait for them, and
// every serving process runs them (the outbox leases keep them apart).
func startMirror(ctx context.Context, cfg *config.Config, logger *slog.Logger, db *store.DB, a *app) error {
	archiveOn := servesAgentMail(cfg) && isDir(cfg.VaultPath)
	gmailOn := cfg.Mirror == "gmail"
	if gmailOn && cfg.DevMode {
		logger.Info("DEV_MODE is on: agent mail is not mirrored to Gmail (AGENT_MAIL_MIRROR=gmail ignored); set DEV_MODE=false to mirror")
		gmailOn = false
	}
	if !archiveOn && !gmailOn {
		return nil
	}
	// The sinks read agent mail through agent-mail's API; opening it
	// migrates the agent-mail schema first (idempotent and cheap when the
	// tool sets already did), which the mirror's own schema builds on.
	// Appended before the sinks' stops, it closes after them.
	msgs, err := amstore.NewService(ctx, db, agentmail.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("opening the agent-mail store for the mirror: %w", err)
	}
	a.closers = append(a.closers, msgs.Close)
	wopts := outbox.WorkerOptions{Logger: logger}
	if archiveOn {
		stop, err := archive.Start(ctx, db, msgs, cfg.VaultPath, wopts)
		if err != nil {
			return err
		}
		a.closers = append(a.closers, stop)
	}
	if gmailOn {
		// The mirror uses the email tools' Gmail client (its token source,
		// or the sandbox's mailbox), or a client of its own when only the
		// agent-mail tools are served.
		client := a.Gmail
		if client == nil {
			var err error
			client, err = gmail.New(ctx, gmail.Options{CredentialsFile: cfg.CredentialsFile, TokenFile: cfg.TokenFile, Endpoint: cfg.GmailEndpoint, Logger: logger})
			if err != nil {
				// The outbox keeps every message: the mirror catches up
				// when a server starts with Gmail connected.
				logger.Warn("AGENT_MAIL_MIRROR=gmail: Gmail is not connected, so agent mail is not mirrored until a server starts after `mailgate auth`", "err", err)
				return nil
			}
		}
		stop, err := mirror.StartGmail(ctx, db, msgs, client, mirrorLease, wopts)
		if err != nil {
			return err
		}
		a.closers = append(a.closers, stop)
		logger.Info("mirroring agent mail into Gmail", "labels", mirror.LabelPrefix+"<project>")
	}
	return nil
}

func servesAgentMail(cfg *config.Config) bool {
	return cfg.HasTools(config.ToolsAgentMail) || cfg.HasTools(config.ToolsChannels) || cfg.HasTools(config.ToolsMailbox)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return path != "" && err == nil && fi.IsDir()
}
