// Package httpserver is mailgate's HTTP front door: one *mcp.Server served to
// many agents over Streamable HTTP (AGENT_MAIL_PATH, /mcp/ by default, also
// /api/) and the legacy HTTP+SSE transport (/sse), with everything a shared
// network service needs around it: bearer authentication, Origin and Host
// checks, a request body bound, per-client rate limits, health endpoints,
// request logs and a graceful shutdown.
//
// It is the only place those concerns live; the MCP server behind it is the
// same one stdio serves, with the same tools, store and approval gate.
//
// Order of the checks for every request (each refusal is logged like any
// other request, without headers or query strings):
//
//  0. connections: at most MaxConnsPerClient open per client address → 503
//     (conns.go); headers within 10 s, or the connection is cut (Serve)
//  1. rate limit, per remote IP and credential state → 429 + Retry-After
//  2. route: /health/* is open; everything else needs the bearer token → 401
//  3. MCP routes only: the whole body within BodyTimeout (→ 408) and within
//     MaxBodyBytes (→ 413), cross-origin (Sec-Fetch-Site / Origin) → 403,
//     then go-sdk's own DNS-rebinding Host check → 403; a JSON-RPC object
//     with an id and no method → 400 with -32600, which go-sdk would drop
//     with a 202 (nomethod.go).
//
// Every refusal is written at once and closes the connection, without
// reading the body the request announced: net/http would otherwise read
// (up to 256 KiB of) that body before writing the answer, and a client that
// announces a body and never sends it would hold the connection, unanswered,
// for ever (issue 18).
package httpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/mailgate/mailgate/internal/metrics"
)

// Defaults. Every client of a loopback server shares the address 127.0.0.1,
// so the authorised per-IP limit is in effect a ceiling for the whole
// machine's agents: it sits well above the designed load (30 agents at
// ≥ 1,000 operations per second) and only stops a runaway loop.
// Unauthenticated requests get a small bucket of their own, so guessing the
// token is slow and cannot spend the agents' budget.
const (
	DefaultPath           = "/mcp/"
	DefaultMaxBodyBytes   = mcp.DefaultMaxRequestBodyBytes // 4 MiB: a 1 MiB mail body JSON-escaped, with room
	DefaultSessionTimeout = 30 * time.Minute               // an agent waiting on a human approval stays idle for minutes
	DefaultRate           = rate.Limit(2000)               // requests per second per client
	DefaultBurst          = 4000
	DefaultAnonRate       = rate.Limit(10) // unauthenticated requests per second per IP, when a token is set
	DefaultAnonBurst      = 20
	DefaultReadyTimeout   = 2 * time.Second
	// DefaultBodyTimeout is how long an authorised request may take to send
	// its whole body once its headers are in: a 4 MiB body over a slow
	// 1 Mbit/s link takes about 32 s, an agent's call a few milliseconds.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds each write of a response (not the whole
	// response: a stream stays open for as long as its session lives). A
	// client that stops reading is cut once the socket buffers are full and
	// a write has waited this long.
	DefaultWriteTimeout = 30 * time.Second

	SSEPath       = "/sse"
	LivenessPath  = "/health/liveness"
	ReadinessPath = "/health/readiness"
	MetricsPath   = "/metrics"
)

// Options configure a Handler. Zero values take the defaults above.
type Options struct {
	// Server backs every session on both transports. The handler owns those
	// sessions: Shutdown and Close end every session of Server.
	Server *mcp.Server
	// Path is the Streamable HTTP endpoint (AGENT_MAIL_PATH). It answers with
	// and without its trailing slash, and /api/ answers too, as the
	// reference agent-mail server mounts it there.
	Path string
	// BearerToken, when set, is required on every request but the health
	// endpoints (Authorization: Bearer …). It is never logged.
	BearerToken string
	// Ready reports whether the backing store answers; /health/readiness
	// calls it with ReadyTimeout. Nil means always ready.
	Ready func(context.Context) error
	// Notice, when it returns text, is added to a ready answer as
	// "notice": something the operator must know although the server
	// serves (a store created beside a vault with history).
	Notice       func() string
	ReadyTimeout time.Duration
	Logger       *slog.Logger
	// Stateless serves Streamable HTTP without sessions: no Mcp-Session-Id,
	// GET and DELETE answer 405, and the server cannot send requests to the
	// client (no elicitation). It is what protocol 2026-07-28 needs; the
	// default is stateful.
	Stateless bool
	// SessionTimeout closes a stateful session after this long without a
	// request, so abandoned sessions do not pile up. Negative: never.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds every request body (413 beyond).
	MaxBodyBytes int64
	// Rate and Burst limit each client (remote IP) presenting the token, or
	// every client when no token is set; AnonRate and AnonBurst limit, per IP,
	// requests without a valid token. A negative rate disables that limit.
	Rate      rate.Limit
	Burst     int
	AnonRate  rate.Limit
	AnonBurst int
	// BodyTimeout bounds the time to receive an MCP request's body (408
	// beyond); WriteTimeout bounds each write of a response.
	BodyTimeout  time.Duration
	WriteTimeout time.Duration
	// MaxConnsPerClient caps the connections one client address holds open
	// (Serve answers 503 beyond); negative: no cap.
	MaxConnsPerClient int

	// JWT, when set, accepts JWTs as bearer credentials beside BearerToken,
	// each limited by its role and projects (roles.go): Tools says what each
	// tool needs, ProjectKey resolves project keys for the comparison.
	JWT        *JWTVerifier
	Tools      map[string]ToolRule
	ProjectKey ProjectKeyFunc
	// Metrics, when set, is served at MetricsPath: behind the bearer
	// token (or an admin JWT) unless MetricsOpen.
	Metrics     http.Handler
	MetricsOpen bool
}

// Handler serves the MCP endpoints, SSE and health. Build it with New.
type Handler struct {
	opts   Options
	log    *slog.Logger
	auth   bearer
	limits *limiter
	routes map[string]route

	// busy counts MCP calls and POST/DELETE requests in flight, which a
	// graceful shutdown waits for before it ends the long-lived streams.
	busy     atomic.Int64
	draining atomic.Bool

	streams     context.Context // ended by Close: hanging GET streams follow it
	stopStreams context.CancelFunc
	closeOnce   sync.Once

	// reached, when set (by tests), sees every request that gets to an MCP
	// transport handler: the fuzzer checks that none came without the token.
	reached func(*http.Request)
}

type route struct {
	h       http.Handler
	public  bool // no bearer token needed
	stream  bool // GET holds the response open (SSE): tied to h.streams
	metrics bool // /metrics: an admin's, answered without an MCP body
}

// New builds the handler and registers, on opts.Server, the middleware that
// tracks in-flight calls for graceful shutdown.
func New(opts Options) (*Handler, error) {
	if opts.Server == nil {
		return nil, errors.New("building the HTTP handler: no MCP server")
	}
	setDefaults(&opts)
	if !strings.HasPrefix(opts.Path, "/") {
		return nil, fmt.Errorf("building the HTTP handler: path %q must start with /", opts.Path)
	}
	h := &Handler{
		opts:   opts,
		log:    opts.Logger,
		auth:   newBearer(opts.BearerToken),
		limits: newLimiter(opts.Rate, opts.Burst, opts.AnonRate, opts.AnonBurst),
		routes: map[string]route{},
	}
	h.streams, h.stopStreams = context.WithCancel(context.Background())
	opts.Server.AddReceivingMiddleware(h.trackCalls)

	getServer := func(*http.Request) *mcp.Server { return opts.Server }
	streamable := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           opts.Stateless,
		SessionTimeout:      max(opts.SessionTimeout, 0),
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		Logger:              opts.Logger,
		// DNS-rebinding protection stays on (DisableLocalhostProtection false):
		// a loopback request naming a foreign Host gets 403.
	})
	sse := mcp.NewSSEHandler(getServer, &mcp.SSEOptions{MaxRequestBodyBytes: opts.MaxBodyBytes})

	mcpRoute := route{h: h.protect(h.reach(streamable)), stream: true}
	for _, p := range mcpPaths(opts.Path) {
		h.routes[p] = mcpRoute
	}
	for _, p := range []string{SSEPath, LivenessPath, ReadinessPath, MetricsPath} {
		if _, taken := h.routes[p]; taken {
			return nil, fmt.Errorf("building the HTTP handler: path %q collides with %s", opts.Path, p)
		}
	}
	// The SSE session endpoint is the GET path itself plus ?sessionid=…
	// (go-sdk derives it from the GET's URL), so one exact route serves both.
	h.routes[SSEPath] = route{h: h.protect(h.reach(sse)), stream: true}
	h.routes[LivenessPath] = route{h: http.HandlerFunc(h.liveness), public: true}
	h.routes[ReadinessPath] = route{h: http.HandlerFunc(h.readiness), public: true}
	if opts.Metrics != nil {
		h.routes[MetricsPath] = route{h: opts.Metrics, public: opts.MetricsOpen, metrics: true}
	}
	return h, nil
}

func setDefaults(o *Options) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Rate == 0 {
		o.Rate, o.Burst = DefaultRate, DefaultBurst
	}
	if o.AnonRate == 0 {
		o.AnonRate, o.AnonBurst = DefaultAnonRate, DefaultAnonBurst
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.MaxConnsPerClient == 0 {
		o.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
}

// mcpPaths is where the Streamable HTTP endpoint answers: the configured
// path with and without its trailing slash (a redirect would turn clients'
// POSTs into GETs), and /api/, the reference server's mount point.
func mcpPaths(p string) []string {
	paths := []string{p}
	if trimmed := strings.TrimRight(p, "/"); trimmed != "" {
		paths = append(paths, trimmed, trimmed+"/")
	}
	return append(paths, "/api", "/api/")
}

// ServeHTTP logs every request once it is answered, whatever answered it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, rc: http.NewResponseController(w), writeTimeout: h.opts.WriteTimeout}
	start := time.Now()
	// One id for the request's log line and the tool call it carries
	// (go-sdk hands a Streamable HTTP request's headers to the call); a
	// client's own value is replaced.
	id := metrics.NewRequestID()
	r.Header.Set(metrics.RequestIDHeader, id)
	w.Header().Set(metrics.RequestIDHeader, id)
	defer h.logRequest(rec, r, start, id)
	// net/http flushes what is buffered once the handler returns: give that
	// last write its own deadline too.
	defer rec.extendWriteDeadline()
	h.serve(rec, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	who, refused := h.authenticate(r)
	authorised := who != nil
	if retry, ok := h.limits.allow(clientIP(r), authorised); !ok {
		writeRateLimited(w, retry)
		return
	}
	rt, found := h.routes[r.URL.Path]
	if !rt.public && !authorised {
		// Also for unknown paths: without the token, nothing is revealed.
		writeUnauthorisedWhy(w, refused)
		return
	}
	if !found {
		writeError(w, http.StatusNotFound, codeInvalidRequest, "not found: the MCP endpoint is "+h.opts.Path)
		return
	}
	if rt.public {
		if r.ContentLength != 0 {
			// The health endpoints take no body: answer, then close the
			// connection rather than wait for what was announced.
			w.Header().Set("Connection", "close")
			defer dropBody(w)
		}
		rt.h.ServeHTTP(w, r)
		return
	}
	if rt.metrics && who.Role < RoleAdmin {
		writeError(w, http.StatusForbidden, codeInvalidRequest, "forbidden: /metrics needs the admin role (or the static bearer token); this token has "+who.Role.String())
		return
	}
	if !h.readBody(w, r) {
		return
	}
	if !who.Static && r.Method == http.MethodPost {
		if !h.authorizeBody(w, r, who) {
			return
		}
	}
	switch {
	case rt.stream && r.Method == http.MethodGet:
		// A hanging GET never goes idle by itself: tie it to the handler so a
		// shutdown can end it once the calls it may carry have answered.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(h.streams, cancel)
		defer stop()
		r = r.WithContext(ctx)
	case r.Method == http.MethodPost || r.Method == http.MethodDelete:
		h.busy.Add(1)
		defer h.busy.Add(-1)
	}
	rt.h.ServeHTTP(w, r)
}

// readBody reads an MCP request's whole body, within MaxBodyBytes and
// BodyTimeout, before any MCP code sees the request, so that no refusal
// further in (go-sdk's included) can leave net/http waiting for a body that
// never comes. Once the body is in, net/http lifts the read deadline itself
// (its background read, which notices a client going away, runs without
// one), so a long call or stream is not cut. go-sdk reads the whole body
// before decoding it anyway: holding it here costs no memory it would not
// spend.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) bool {
	limit := h.opts.MaxBodyBytes
	if r.ContentLength > limit {
		// An honest oversized request is answered before a byte is read.
		writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", limit))
		return false
	}
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
		var buf bytes.Buffer
		if r.ContentLength > 0 {
			buf.Grow(int(r.ContentLength))
		}
		_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", limit))
			case errors.Is(err, os.ErrDeadlineExceeded):
				writeError(w, http.StatusRequestTimeout, codeInvalidRequest,
					fmt.Sprintf("request body not received within %s", h.opts.BodyTimeout))
			default:
				writeError(w, http.StatusBadRequest, codeInvalidRequest, "reading the request body failed")
			}
			return false
		}
		r.Body = io.NopCloser(&buf)
		r.ContentLength = int64(buf.Len())
	}
	return true
}

// protect wraps an MCP transport handler in the Origin check.
func (h *Handler) protect(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusForbidden, codeInvalidRequest, "cross-origin request refused: MCP clients are not browser pages")
	}))
	checked := cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, r = guardNoMethod(w, r)
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// CrossOriginProtection lets GET and HEAD through as "safe", but a GET
		// here opens a session (SSE) or a stream: check it as a POST would be.
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			probe := r.WithContext(r.Context())
			probe.Method = http.MethodPost
			if err := cop.Check(probe); err != nil {
				writeError(w, http.StatusForbidden, codeInvalidRequest, "cross-origin request refused: MCP clients are not browser pages")
				return
			}
		}
		checked.ServeHTTP(w, r)
	})
}

// reach reports requests that get to next to the reached hook.
func (h *Handler) reach(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.reached != nil {
			h.reached(r)
		}
		next.ServeHTTP(w, r)
	})
}

// trackCalls counts MCP calls in flight on the server, whichever transport
// carries them: an SSE call is answered over the GET stream after its POST
// has returned 202, so counting POSTs alone would miss it.
func (h *Handler) trackCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		h.busy.Add(1)
		defer h.busy.Add(-1)
		return next(ctx, method, req)
	}
}

// Shutdown drains the handler: readiness turns 503, then it waits until no
// call or POST is in flight (or ctx ends) and closes every stream and
// session. Call it after http.Server.Shutdown has stopped new connections.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.draining.Store(true)
	err := h.waitIdle(ctx)
	h.Close()
	return err
}

// waitIdle polls the in-flight count. Idle must hold on two polls in a row:
// an SSE call is handed from its POST to the session's reader through a
// channel, a moment in which nothing is counted.
func (h *Handler) waitIdle(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	idle := 0
	for {
		if h.busy.Load() == 0 {
			if idle++; idle == 2 {
				return nil
			}
		} else {
			idle = 0
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d in-flight calls: %w", h.busy.Load(), ctx.Err())
		case <-tick.C:
		}
	}
}

// Close ends every hanging stream and every session of the server at once.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		h.draining.Store(true)
		h.stopStreams()
		for ss := range h.opts.Server.Sessions() {
			ss.Close()
		}
	})
}
