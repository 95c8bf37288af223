package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gitrepo"
	"github.com/mailgate/mailgate/internal/httpserver"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/metrics"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
)

// AGENT_MAIL_METRICS values.
const (
	metricsAuth = "auth"
	metricsOpen = "open"
	metricsOff  = "off"
)

// jwtVerifier builds the JWT verifier the configuration asks for (nil when
// neither a key file nor a JWKS URL is set).
func jwtVerifier(cfg *config.Config, logger *slog.Logger) (*httpserver.JWTVerifier, error) {
	if cfg.JWTKeyFile == "" && cfg.JWKSURL == "" {
		return nil, nil
	}
	if cfg.HTTPAuth == httpAuthNone {
		return nil, &config.Error{Var: "AGENT_MAIL_HTTP_AUTH", Msg: "none, but a JWT key is set (AGENT_MAIL_JWT_KEY_FILE or AGENT_MAIL_JWKS_URL): a tokenless server checks nothing, so roles would mean nothing; unset AGENT_MAIL_HTTP_AUTH"}
	}
	if cfg.JWTKeyFile != "" && cfg.JWKSURL != "" {
		return nil, &config.Error{Var: "AGENT_MAIL_JWKS_URL", Msg: "and AGENT_MAIL_JWT_KEY_FILE are both set: keep one"}
	}
	keyFile := cfg.JWTKeyFile
	if keyFile != "" && !filepath.IsAbs(keyFile) {
		keyFile = filepath.Join(cfg.Home, keyFile)
	}
	v, err := httpserver.NewJWTVerifier(httpserver.JWTOptions{
		KeyFile: keyFile, JWKSURL: cfg.JWKSURL, Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience, Logger: logger,
	})
	if err != nil {
		name := "AGENT_MAIL_JWT_KEY_FILE"
		if cfg.JWKSURL != "" {
			name = "AGENT_MAIL_JWKS_URL"
		}
		return nil, &config.Error{Var: name, Msg: err.Error()}
	}
	return v, nil
}

// toolRules is what each tool asks of a JWT: the email tools the admin
// role, the read-only agent-mail tools the read role, the others the agent
// role; the channels and mailbox sets touch the server's one project, that
// of the working directory dir ("" is the process's).
func toolRules(ctx context.Context, cfg *config.Config, dir string) map[string]httpserver.ToolRule {
	serverProject := ""
	if cfg.HasTools(config.ToolsChannels) || cfg.HasTools(config.ToolsMailbox) {
		// As the channels and mailbox sets find it (SetOptions' default).
		if key, err := gitrepo.ProjectKey(ctx, dir); err == nil {
			serverProject = key
		} else {
			serverProject = "/"
		}
	}
	rules := map[string]httpserver.ToolRule{}
	for _, a := range mcpserver.ToolAccessList() {
		if !cfg.HasTools(a.Set) {
			continue
		}
		r := httpserver.ToolRule{Role: httpserver.RoleAgent, ProjectArgs: a.ProjectArgs, AddressArgs: a.AddressArgs, PathArgs: a.PathArgs, Products: a.Products}
		switch {
		case a.Set == config.ToolsEmail:
			r.Role = httpserver.RoleAdmin
		case a.ReadOnly:
			r.Role = httpserver.RoleRead
		}
		if a.ServerProject {
			r.Project = serverProject
		}
		rules[a.Name] = r
	}
	return rules
}

// projectKeys resolves project keys for the JWT projects claim through the
// agent-mail store (a slug to its project's path), or, without the
// agent-mail tools, compares them as given.
func projectKeys(svc *agentmail.Service) httpserver.ProjectKeyFunc {
	if svc == nil {
		return nil
	}
	return svc.CanonicalProjectKey
}

// metricSources are what /metrics reads at scrape time from the store and
// the vault.
func metricSources(ctx context.Context, cfg *config.Config, logger *slog.Logger, db *store.DB) (metrics.Sources, error) {
	src := metrics.Sources{StoreRetries: store.Retries, Logger: logger}
	if cfg.HasTools(config.ToolsAgentMail) || cfg.HasTools(config.ToolsChannels) || cfg.HasTools(config.ToolsMailbox) {
		src.Outbox = func(ctx context.Context) ([]metrics.OutboxStat, error) {
			stats, err := outbox.Stats(ctx, db)
			if err != nil {
				return nil, err
			}
			now := time.Now()
			out := make([]metrics.OutboxStat, 0, len(stats))
			for _, s := range stats {
				o := metrics.OutboxStat{Sink: s.Sink, Depth: s.Depth}
				if !s.Oldest.IsZero() {
					o.Lag = max(now.Sub(s.Oldest), 0)
				}
				out = append(out, o)
			}
			return out, nil
		}
	}
	if cfg.HasTools(config.ToolsEmail) {
		// A limiter of its own on the same table, counting as the gate's
		// does (same bucket, same clock); it reserves nothing.
		lim, err := ratelimit.New(ctx, db, cfg.SendLimit, time.Hour)
		if err != nil {
			return metrics.Sources{}, fmt.Errorf("opening the send limiter for metrics: %w", err)
		}
		lim.SetMonotonic(ratelimit.SystemClock)
		src.SendSlots = func(ctx context.Context) (int, int, error) {
			n, err := lim.Used(ctx, time.Now())
			return n, lim.Limit(), err
		}
		src.PendingApprovals = func() (int, error) { return approval.CountPending(cfg.VaultPath) }
	}
	return src, nil
}

// checkMetrics refuses /metrics without authentication on an address other
// machines reach, and the tokenless mode with JWTs (nothing would be
// checked of a request without one).
func checkMetrics(cfg *config.Config, public bool) error {
	if cfg.Metrics == metricsOpen && public && cfg.MetricsAddr == "" {
		return &config.Error{Var: "AGENT_MAIL_METRICS", Msg: "open serves /metrics without authentication, and --public serves other machines: " +
			"keep auth (scrape with the bearer token), or set AGENT_MAIL_METRICS_ADDR to a loopback address"}
	}
	return nil
}

// metricsURL says where /metrics is served, for the start line.
func metricsURL(cfg *config.Config, base string, ln net.Listener) string {
	switch {
	case ln != nil:
		return "http://" + ln.Addr().String() + httpserver.MetricsPath + " (no authentication)"
	case cfg.Metrics == metricsOpen:
		return base + httpserver.MetricsPath + " (no authentication)"
	}
	return base + httpserver.MetricsPath + " (bearer token)"
}

// serveMetrics serves /metrics alone on ln (AGENT_MAIL_METRICS_ADDR) until
// ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, m *metrics.Metrics, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET "+httpserver.MetricsPath, m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: httpserver.ReadHeaderTimeout, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("metrics server stopped", "err", err)
	}
}
