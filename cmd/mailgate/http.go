package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/httpserver"
	"golang.org/x/time/rate"
)

// serveHTTP serves MCP over Streamable HTTP (cfg.HTTPPath, also /api/) and
// legacy HTTP+SSE (/sse) on addr until ctx ends (SIGINT/SIGTERM), then
// finishes the calls in flight and closes the store. Everything it says goes
// to the log on stderr; stdout is unused.
func serveHTTP(ctx context.Context, env *environment, cfg *config.Config, logger *slog.Logger, addr string, useSandbox bool) error {
	// Never open: without a token, one is generated and saved (before the
	// bind, which refuses a non-loopback address without one).
	savedIn, err := ensureBearerToken(cfg)
	if err != nil {
		return err
	}
	// Bind before opening anything: a refused or busy address fails at once,
	// with nothing to undo.
	ln, err := httpserver.Listen(ctx, addr, cfg.BearerToken != "")
	if err != nil {
		return err
	}
	defer ln.Close()

	app, err := open(ctx, cfg, logger, useSandbox)
	if err != nil {
		return err
	}
	defer app.Close()
	if err := app.announce(ctx, cfg, logger, "http", useSandbox); err != nil {
		return err
	}

	// AGENT_MAIL_HTTP_RATE_LIMIT per client, bursts of twice that; 0 is
	// "no limit", which httpserver spells as a negative rate.
	limit, burst := rate.Limit(cfg.HTTPRateLimit), 2*cfg.HTTPRateLimit
	if cfg.HTTPRateLimit == 0 {
		limit = -1
	}
	h, err := httpserver.New(httpserver.Options{
		Server:      app.Server,
		Path:        cfg.HTTPPath,
		BearerToken: cfg.BearerToken,
		Ready:       app.DB.PingContext,
		Logger:      logger,
		Rate:        limit,
		Burst:       burst,
	})
	if err != nil {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	base := "http://" + ln.Addr().String()
	logger.Info("mailgate serving over HTTP", app.startAttrs(cfg, "url", base+cfg.HTTPPath, "sse", base+httpserver.SSEPath, "auth", authMode(cfg, savedIn))...)
	if n := len(cfg.BearerToken); n > 0 && n < 16 {
		logger.Warn("AGENT_MAIL_BEARER_TOKEN is short; use at least 32 random characters", "length", n)
	}
	return httpserver.Serve(ctx, ln, h, httpserver.DefaultGrace)
}

// authMode names the authentication in the startup log, never the token.
func authMode(cfg *config.Config, savedIn string) string {
	switch {
	case savedIn != "":
		return "bearer token: none was set, so this server generated a bearer token and saved it in " + savedIn +
			" (AGENT_MAIL_BEARER_TOKEN); clients send Authorization: Bearer <it>, which mailgate config get AGENT_MAIL_BEARER_TOKEN prints"
	case cfg.BearerToken != "":
		return "bearer token (AGENT_MAIL_BEARER_TOKEN)"
	}
	return "none (loopback only)"
}
