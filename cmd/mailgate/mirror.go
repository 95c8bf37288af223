package main

import (
	"context"
	"log/slog"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
)

// startMirror starts the agent-mail mirror and archive when configured
// (placeholder: being written).
func startMirror(ctx context.Context, cfg *config.Config, logger *slog.Logger, db *store.DB, a *app) error {
	if cfg.Mirror == "gmail" {
		logger.Warn("AGENT_MAIL_MIRROR=gmail is not available yet; nothing is mirrored")
	}
	return nil
}
