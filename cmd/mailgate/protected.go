package main

import (
	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
)

// protectedPaths are mailgate's own files and folders, which no agent-mail
// project may be, hold or lie inside: agents attach files from a project's
// folder, and these hold the Gmail token, the OAuth client, pending
// requests, the audit log, the store and the vault.
func protectedPaths(cfg *config.Config) []agentmail.ProtectedPath {
	ps := []agentmail.ProtectedPath{
		{What: "mailgate's home", Path: cfg.Home},
		{What: "the vault", Path: cfg.VaultPath},
		{What: "the Gmail OAuth client file", Path: cfg.CredentialsFile},
		{What: "the Gmail token file", Path: cfg.TokenFile},
		{What: "the audit log folder", Path: cfg.AuditDir},
	}
	if !store.IsPostgres(cfg.DB) {
		ps = append(ps, agentmail.ProtectedPath{What: "the store", Path: cfg.DB})
	}
	return ps
}
