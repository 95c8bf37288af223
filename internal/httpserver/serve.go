package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// DefaultGrace is how long a shutdown waits for in-flight calls. A send
// through the approval gate is one Gmail call; reads retry with backoff for
// a few seconds at most.
const DefaultGrace = 20 * time.Second

// Connection timeouts of Serve (see also Options.BodyTimeout and
// WriteTimeout).
const (
	ReadHeaderTimeout = 10 * time.Second
	IdleTimeout       = 2 * time.Minute
	MaxHeaderBytes    = 64 << 10
)

// ErrNotLoopback is returned by Listen for a non-loopback address that was
// not asked for as public.
var ErrNotLoopback = errors.New("not a loopback address")

// Listen binds addr for HTTP. Only loopback addresses are accepted unless
// public: a server other machines can reach is a decision to name
// (serve --public), never the side effect of an address setting.
func Listen(ctx context.Context, addr string, public bool) (net.Listener, error) {
	if !public {
		loop, err := isLoopback(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("checking the HTTP address %s: %w", addr, err)
		}
		if !loop {
			return nil, fmt.Errorf("refusing to serve HTTP on %s: %w; pass --public to serve other machines (with the bearer token), or bind 127.0.0.1",
				addr, ErrNotLoopback)
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// isLoopback reports whether every address addr can bind is a loopback one.
// An empty host (":8765") means every interface.
func isLoopback(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("parsing the address: %w", err)
	}
	if host == "" {
		return false, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false, fmt.Errorf("resolving %s: %w", host, err)
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}

// Serve serves h on ln until ctx ends, then shuts down gracefully: the
// listener closes at once, requests and MCP calls in flight get up to grace
// to finish (SSE calls answer over their stream, so streams stay open until
// the calls are done), then every stream and session is ended. Past the
// deadline the remaining connections are cut. A clean stop returns nil.
func Serve(ctx context.Context, ln net.Listener, h *Handler, grace time.Duration) error {
	if grace <= 0 {
		grace = DefaultGrace
	}
	srv := &http.Server{
		Handler: h,
		// Headers must arrive within ReadHeaderTimeout, and the whole
		// request within ReadTimeout (BodyTimeout, which the handler starts
		// again for an MCP body once the request is authorised). Reading
		// ends there: net/http lifts the read deadline once the body is
		// consumed, so a stream or a long call is not cut by it.
		// There is no WriteTimeout: net/http sets it once per request, so it
		// would end every stream after that long; each write gets its own
		// deadline instead (Options.WriteTimeout). Idle keep-alive connections close
		// after IdleTimeout.
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       h.opts.BodyTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	ln = limitPerClient(ln, h.opts.MaxConnsPerClient, h.log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		h.Close()
		return fmt.Errorf("serving HTTP: %w", err)
	case <-ctx.Done():
	}

	h.log.Info("shutting down: finishing in-flight calls", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }() // stops accepting now; waits for active requests
	drainErr := h.Shutdown(sctx)               // waits for calls, then ends streams and sessions
	shutErr := <-shut
	if shutErr != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving HTTP: %w", err)
	}
	if err := errors.Join(drainErr, shutErr); err != nil {
		// Not a failure of the process: it was asked to stop and did.
		h.log.Warn("shutdown deadline passed: cut what was still running", "error", err)
		return nil
	}
	h.log.Info("HTTP server stopped")
	return nil
}

// MinTokenLength is the shortest bearer token Serve's callers accept, after
// surrounding spaces are trimmed: 32 characters are 128 bits as random hex
// (`openssl rand -hex 16`), beyond guessing even from many addresses at the
// rate limit; shorter values are, in practice, passwords a person chose.
const MinTokenLength = 32

// ErrWeakToken is the error CheckToken wraps.
var ErrWeakToken = errors.New("unusable bearer token")

// CheckToken refuses a bearer token that is too short, or that holds
// characters an Authorization header cannot carry faithfully (spaces,
// control characters, anything outside printable ASCII). The error says how
// to make a good one and never quotes the token.
func CheckToken(token string) error {
	t := strings.TrimSpace(token)
	for _, c := range t {
		if c <= ' ' || c > '~' {
			return fmt.Errorf("%w: it holds a space, a control character or a non-ASCII character, which clients cannot all send in an Authorization header; generate one with `openssl rand -hex 32`", ErrWeakToken)
		}
	}
	if len(t) < MinTokenLength {
		return fmt.Errorf("%w: %d characters after trimming spaces, at least %d are needed; generate one with `openssl rand -hex 32`", ErrWeakToken, len(t), MinTokenLength)
	}
	return nil
}
