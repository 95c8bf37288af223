package httpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// bearer checks Authorization: Bearer <token>. Both sides are hashed before
// the constant-time comparison, so neither the token's bytes nor its length
// show in the timing.
type bearer struct {
	set bool
	sum [sha256.Size]byte
}

func newBearer(token string) bearer {
	token = strings.TrimSpace(token) // as the presented token is trimmed
	if token == "" {
		return bearer{}
	}
	return bearer{set: true, sum: sha256.Sum256([]byte(token))}
}

// check reports whether r may pass: always when no token is configured.
func (b bearer) check(r *http.Request) bool {
	if !b.set {
		return true
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := subtle.ConstantTimeCompare(got[:], b.sum[:]) == 1
	return match && strings.EqualFold(scheme, "Bearer")
}

// limiter holds one token bucket per client: remote IP plus whether the
// request carried the valid token. Idle buckets are swept on access (no
// goroutine to leak), and the table is capped so a spray of source addresses
// cannot grow memory without bound.
type limiter struct {
	mu        sync.Mutex
	clients   map[clientKey]*bucket
	lastSweep time.Time
	now       func() time.Time

	rate, anonRate   rate.Limit
	burst, anonBurst int
}

type clientKey struct {
	ip         string
	authorised bool
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const (
	maxClients    = 1 << 16
	sweepInterval = time.Minute
	bucketIdle    = 5 * time.Minute
)

func newLimiter(r rate.Limit, burst int, anonRate rate.Limit, anonBurst int) *limiter {
	if r < 0 {
		r = rate.Inf
	}
	if anonRate < 0 {
		anonRate = rate.Inf
	}
	return &limiter{
		clients: map[clientKey]*bucket{}, now: time.Now,
		rate: r, burst: burst, anonRate: anonRate, anonBurst: anonBurst,
	}
}

// allow takes one token from the client's bucket, or says how long to wait.
func (l *limiter) allow(ip string, authorised bool) (time.Duration, bool) {
	lr, burst := l.rate, l.burst
	if !authorised {
		lr, burst = l.anonRate, l.anonBurst
	}
	if lr == rate.Inf {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) > sweepInterval || len(l.clients) >= maxClients {
		l.sweep(now)
	}
	key := clientKey{ip: ip, authorised: authorised}
	b := l.clients[key]
	if b == nil {
		if len(l.clients) >= maxClients {
			key.ip = "" // table full: the newcomers share one bucket
		}
		if b = l.clients[key]; b == nil {
			b = &bucket{lim: rate.NewLimiter(lr, burst)}
			l.clients[key] = b
		}
	}
	b.seen = now
	l.mu.Unlock()

	res := b.lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Second, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now) // a refused request must not spend the future
		return d, false
	}
	return 0, true
}

func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for k, b := range l.clients {
		if now.Sub(b.seen) > bucketIdle {
			delete(l.clients, k)
		}
	}
}

// clientIP is the client a request comes from (see addrKey).
// X-Forwarded-For is not trusted: mailgate is not meant to sit behind a
// proxy that sets it.
func clientIP(r *http.Request) string { return addrKey(r.RemoteAddr) }

// JSON-RPC error codes for refusals made before the MCP layer sees the
// request. A JSON-RPC error body lets MCP clients (go-sdk decodes non-2xx
// bodies) show the reason instead of a bare status text.
const (
	codeInvalidRequest = -32600
	codeServerError    = -32000
)

type errorBody struct {
	JSONRPC string      `json:"jsonrpc"`
	ID      any         `json:"id"`
	Error   errorDetail `json:"error"`
}

type errorDetail struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeErrorData(w, status, code, msg, nil)
}

// writeErrorData answers a refusal and closes the connection. The body the
// request announced is never read: with Connection: close net/http writes
// the answer at once instead of first reading that body, and dropBody makes
// its last attempt to read it (when the handler returns) fail at once.
func writeErrorData(w http.ResponseWriter, status, code int, msg string, data any) {
	writeErrorFull(w, status, code, msg, data, nil)
}

// writeErrorID is writeError answering the request of that JSON-RPC id.
func writeErrorID(w http.ResponseWriter, status, code int, msg string, id json.RawMessage) {
	writeErrorFull(w, status, code, msg, nil, id)
}

func writeErrorFull(w http.ResponseWriter, status, code int, msg string, data any, id json.RawMessage) {
	var rid any
	if len(id) > 0 {
		rid = id
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{JSONRPC: "2.0", ID: rid, Error: errorDetail{Code: code, Message: msg, Data: data}})
	dropBody(w)
}

// dropBody ends the reading of the request: net/http, when the handler
// returns, reads what is left of the body (up to 256 KiB) to reuse the
// connection, and would wait for a body that never comes. Call it only once
// the answer is decided; the connection is not reused.
func dropBody(w http.ResponseWriter) {
	http.NewResponseController(w).SetReadDeadline(time.Now())
}

func writeUnauthorised(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="mailgate"`)
	writeError(w, http.StatusUnauthorized, codeServerError, "unauthorized: send the server's token as Authorization: Bearer <AGENT_MAIL_BEARER_TOKEN>")
}

func writeRateLimited(w http.ResponseWriter, retry time.Duration) {
	secs := int(math.Ceil(retry.Seconds()))
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeErrorData(w, http.StatusTooManyRequests, codeServerError,
		fmt.Sprintf("rate limited: too many requests from this client; retry after %ds", secs),
		map[string]int{"retry_after_seconds": secs})
}
