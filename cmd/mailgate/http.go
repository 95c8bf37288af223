package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/httpserver"
	"golang.org/x/time/rate"
)

// httpGCPercent is the garbage collector's target (GOGC) of serve --http
// when GOGC is not set. Under load most of what the server allocates is
// garbage at once: go-sdk decodes each request four times, each with a new
// 32 KiB buffer (70% of the bytes allocated under the 30-client load of
// BENCHMARKS.md, go tool pprof -sample_index=alloc_space), while what stays
// live is a few MiB. At the default of 100 the collector ran every few
// milliseconds; at 400 it runs a quarter as often, for a heap peak about
// 20 MiB higher.
const httpGCPercent = 400

// setGCPercent sets the collector's target to percent unless the user set
// GOGC, which stays theirs, and returns what puts the previous one back.
func setGCPercent(getenv func(string) string, percent int) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}

// serveHTTP serves MCP over Streamable HTTP (cfg.HTTPPath, also /api/) and
// legacy HTTP+SSE (/sse) on addr until ctx ends (SIGINT/SIGTERM), then
// finishes the calls in flight and closes the store. Everything it says goes
// to the log on stderr; stdout is unused.
func serveHTTP(ctx context.Context, env *environment, cfg *config.Config, logger *slog.Logger, addr string, useSandbox bool) error {
	// The email tools are served over HTTP only with a token (see
	// checkHTTPAuth). Rather than refuse to start on a fresh machine, a
	// server that would serve them without one generates one and saves it
	// in the home's settings, where clients' configuration finds it.
	savedIn := ""
	if cfg.BearerToken == "" && cfg.HasTools(config.ToolsEmail) {
		var err error
		if savedIn, err = ensureBearerToken(cfg); err != nil {
			return err
		}
	}
	if err := checkHTTPAuth(cfg); err != nil {
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
	setGCPercent(env.getenv, httpGCPercent)
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
		Notice:      func() string { return app.notice },
		Logger:      logger,
		Rate:        limit,
		Burst:       burst,
	})
	if err != nil {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	base := "http://" + ln.Addr().String()
	logger.Info("mailgate serving over HTTP", app.startAttrs(cfg, "url", base+cfg.HTTPPath, "sse", base+httpserver.SSEPath, "auth", authMode(cfg, savedIn))...)
	return httpserver.Serve(ctx, ln, h, httpserver.DefaultGrace)
}

// checkHTTPAuth refuses, before anything is opened, a bearer token too weak
// to be one (whitespace, a short password: see httpserver.CheckToken), and
// the email tools over HTTP without a token. On loopback every local user
// and process can reach the port; without a token each of them could read
// the mailbox and ask for sends, so the mailbox is served only to whoever
// holds the token. The agent-mail tool sets stay available without one on
// loopback, as before.
func checkHTTPAuth(cfg *config.Config) error {
	if cfg.BearerToken != "" {
		if err := httpserver.CheckToken(cfg.BearerToken); err != nil {
			return &config.Error{Var: "AGENT_MAIL_BEARER_TOKEN", Msg: err.Error()}
		}
		return nil
	}
	if cfg.HasTools(config.ToolsEmail) {
		return &config.Error{Var: "AGENT_MAIL_BEARER_TOKEN", Msg: "the email tools are served over HTTP only with a bearer token, " +
			"even on loopback (every local user and process could otherwise use the mailbox): " +
			"set AGENT_MAIL_BEARER_TOKEN (generate one with `openssl rand -hex 32`), or serve only the agent-mail tools with MAILGATE_TOOLS=agentmail"}
	}
	return nil
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
