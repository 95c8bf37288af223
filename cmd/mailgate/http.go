package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/httpserver"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/metrics"
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
// to the log on stderr; stdout is unused. public allows an address other
// machines can reach (--public).
func serveHTTP(ctx context.Context, env *environment, cfg *config.Config, logger *slog.Logger, addr string, useSandbox, public bool) error {
	// A port is reachable by every local user and process (and, on another
	// address, by the network), and agent mail reads project files, so HTTP
	// needs a bearer token unless AGENT_MAIL_HTTP_AUTH=none asks otherwise
	// by name. Rather than refuse to start on a fresh machine, a server
	// without one generates one and saves it in the home's settings, where
	// clients' configuration finds it.
	if err := checkHTTPAuth(cfg, public); err != nil {
		return err
	}
	if err := checkMetrics(cfg, public); err != nil {
		return err
	}
	verifier, err := jwtVerifier(cfg, logger)
	if err != nil {
		return err
	}
	savedIn := ""
	if cfg.HTTPAuth != httpAuthNone && cfg.BearerToken == "" {
		if savedIn, err = ensureBearerToken(cfg); err != nil {
			return err
		}
	}
	// Bind before opening anything: a refused or busy address fails at once,
	// with nothing to undo.
	ln, err := httpserver.Listen(ctx, addr, public)
	if err != nil {
		return err
	}
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.Metrics != metricsOff && cfg.MetricsAddr != "" {
		// Served without authentication: never where other machines reach.
		if metricsLn, err = httpserver.Listen(ctx, cfg.MetricsAddr, false); err != nil {
			return &config.Error{Var: "AGENT_MAIL_METRICS_ADDR", Msg: err.Error()}
		}
		defer metricsLn.Close()
	}

	app, deps, err := openDeps(ctx, env, cfg, logger, useSandbox)
	if err != nil {
		return err
	}
	defer app.Close()
	var met *metrics.Metrics
	if cfg.Metrics != metricsOff {
		src, err := metricSources(ctx, cfg, logger, app.DB)
		if err != nil {
			return err
		}
		met = metrics.New(mcpserver.ToolNames(cfg.Tools), src)
		deps.Observer = met
	}
	if app.Server, err = mcpserver.New(deps); err != nil {
		return err
	}
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
	opts := httpserver.Options{
		Server:      app.Server,
		Path:        cfg.HTTPPath,
		BearerToken: cfg.BearerToken,
		Ready:       app.DB.PingContext,
		Notice:      func() string { return app.notice },
		Logger:      logger,
		Rate:        limit,
		Burst:       burst,
	}
	if verifier != nil {
		opts.JWT, opts.Tools, opts.ProjectKey = verifier, toolRules(ctx, cfg, env.dir), projectKeys(deps.AgentMail)
	}
	if met != nil && metricsLn == nil {
		opts.Metrics, opts.MetricsOpen = met.Handler(), cfg.Metrics == metricsOpen
	}
	h, err := httpserver.New(opts)
	if err != nil {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	base := "http://" + ln.Addr().String()
	switch {
	case cfg.HTTPAuth == httpAuthNone:
		logger.Warn("HTTP WITHOUT A BEARER TOKEN (AGENT_MAIL_HTTP_AUTH=none): every local user and process can call the "+
			strings.Join(cfg.Tools, ", ")+" tools at "+base+cfg.HTTPPath+"; only Origin and Host are checked. "+
			"Unset AGENT_MAIL_HTTP_AUTH to require the bearer token", "addr", ln.Addr().String())
	case public:
		logger.Warn("HTTP on an address other machines can reach (--public): whoever reaches "+ln.Addr().String()+
			" and holds the bearer token can use the "+strings.Join(cfg.Tools, ", ")+" tools"+exposes(cfg), "addr", ln.Addr().String())
	}
	attrs := []any{"url", base + cfg.HTTPPath, "sse", base + httpserver.SSEPath, "auth", authMode(cfg, savedIn, verifier != nil)}
	if met != nil {
		attrs = append(attrs, "metrics", metricsURL(cfg, base, metricsLn))
	}
	logger.Info("mailgate serving over HTTP", app.startAttrs(cfg, attrs...)...)
	if metricsLn != nil {
		go serveMetrics(ctx, metricsLn, met, logger)
	}
	return httpserver.Serve(ctx, ln, h, httpserver.DefaultGrace)
}

// httpAuthNone is AGENT_MAIL_HTTP_AUTH's tokenless mode.
const httpAuthNone = "none"

// checkHTTPAuth refuses, before anything is opened, a bearer token too weak
// to be one (whitespace, a short password: see httpserver.CheckToken), and
// the tokenless mode anywhere but where it was meant for: clients of the
// agent-mail contract that cannot send a token, on loopback. Without a
// token every local user and process could use the mailbox, so the email
// tools never go without one; and a public server never does.
func checkHTTPAuth(cfg *config.Config, public bool) error {
	if cfg.HTTPAuth == httpAuthNone {
		switch {
		case cfg.BearerToken != "":
			return &config.Error{Var: "AGENT_MAIL_HTTP_AUTH", Msg: "none, but AGENT_MAIL_BEARER_TOKEN is set: a tokenless server would accept requests without it; " +
				"unset one of them (mailgate config unset AGENT_MAIL_BEARER_TOKEN, or unset AGENT_MAIL_HTTP_AUTH to keep the token)"}
		case cfg.HasTools(config.ToolsEmail):
			return &config.Error{Var: "AGENT_MAIL_HTTP_AUTH", Msg: "none serves only the agent-mail tool sets (agentmail, channels, mailbox), and MAILGATE_TOOLS has email: " +
				"every local user and process could use the mailbox; set MAILGATE_TOOLS=agentmail, or unset AGENT_MAIL_HTTP_AUTH to use the bearer token"}
		case public:
			return &config.Error{Var: "AGENT_MAIL_HTTP_AUTH", Msg: "none is for loopback only, and --public asks for an address other machines can reach: " +
				"unset AGENT_MAIL_HTTP_AUTH (the first serve --http generates and saves a bearer token)"}
		}
		return nil
	}
	if cfg.BearerToken != "" {
		if err := httpserver.CheckToken(cfg.BearerToken); err != nil {
			return &config.Error{Var: "AGENT_MAIL_BEARER_TOKEN", Msg: err.Error()}
		}
	}
	return nil
}

// exposes says what the email tools give whoever holds the token, for the
// --public start line.
func exposes(cfg *config.Config) string {
	if cfg.HasTools(config.ToolsEmail) {
		return " (the email tools read the mailbox and ask for sends through the approval gate)"
	}
	return ""
}

// authMode names the authentication in the startup log, never the token.
func authMode(cfg *config.Config, savedIn string, jwt bool) string {
	mode := tokenMode(cfg, savedIn)
	if jwt {
		mode += "; also JWTs with a role claim (read, agent, admin) and an optional projects claim"
	}
	return mode
}

func tokenMode(cfg *config.Config, savedIn string) string {
	switch {
	case savedIn != "":
		return "bearer token: none was set, so this server generated a bearer token and saved it in " + savedIn +
			" (AGENT_MAIL_BEARER_TOKEN); clients send Authorization: Bearer <it>, which mailgate config get AGENT_MAIL_BEARER_TOKEN prints"
	case cfg.BearerToken != "":
		return "bearer token (AGENT_MAIL_BEARER_TOKEN)"
	}
	return "none (AGENT_MAIL_HTTP_AUTH=none: loopback only, agent-mail tools only)"
}
