package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/config"
)

// ensureBearerToken gives serve --http a bearer token when none is set: a
// server on a port is reachable by every local program and, on another
// address, by the network, so it never runs open. The token is 256 random
// bits in hex, saved as AGENT_MAIL_BEARER_TOKEN in the home's settings file
// (or the --env-file in use), where every later start, and the person
// configuring clients (mailgate config get AGENT_MAIL_BEARER_TOKEN), find
// it. It returns the file it was saved in, or "" when a token was set.
func ensureBearerToken(cfg *config.Config) (string, error) {
	if cfg.BearerToken != "" {
		return "", nil
	}
	file := cfg.SettingsFile
	if cfg.EnvFile != "" {
		file = cfg.EnvFile
	}
	// Another server starting at the same moment may have just saved one:
	// use it rather than replace it.
	if m, err := godotenv.Read(file); err == nil && m["AGENT_MAIL_BEARER_TOKEN"] != "" {
		cfg.BearerToken = m["AGENT_MAIL_BEARER_TOKEN"]
		return "", nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a bearer token: %w", err)
	}
	tok := hex.EncodeToString(b)
	if file == cfg.SettingsFile {
		if err := cfg.EnsureHome(); err != nil {
			return "", err
		}
	}
	if err := config.WriteSetting(file, "AGENT_MAIL_BEARER_TOKEN", tok); err != nil {
		return "", fmt.Errorf("saving a generated bearer token: %w", err)
	}
	cfg.BearerToken = tok
	return file, nil
}
