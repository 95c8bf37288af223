// Package localgmail is a local, in-memory Gmail REST server that the real
// google.golang.org/api/gmail/v1 client can talk to.
//
// It exists for two reasons. Every test of mailgate's Gmail client needs a
// server that answers like Gmail does — same JSON wire types, same error
// bodies, same threading and search behaviour, plus the failures (429s, 5xx,
// dropped connections, expired tokens) that real Gmail produces and that the
// client must survive. And `mailgate serve --sandbox` runs it in-process on
// loopback so a newcomer can try every email tool without a Google account.
//
// The behaviour it reproduces is specified in gmail-api.md (shared notes);
// responses are built by marshalling the client library's own structs so
// that wire types are exactly what the client expects.
package localgmail

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Server.
type Options struct {
	Email            string           // the mailbox owner; default "me@sandbox.local"
	Now              func() time.Time // default time.Now
	RequireAuth      bool             // every /gmail/ request needs a Bearer access token issued by /token
	RewriteMessageID bool             // emulate Gmail replacing the Message-ID of API sends with <CA…@mail.gmail.com>
	// Aliases are verified send-as addresses besides Email: listed by
	// users.settings.sendAs after the primary, and kept as From on send.
	Aliases []string
	// PendingAliases are send-as addresses added in Gmail whose
	// verification is not finished (verificationStatus "pending"): listed,
	// but a message sent with one as From leaves from the owner's address,
	// as for any address that is not a verified alias.
	PendingAliases []string
	// InlineMax: an attachment (a named part, or a non-text leaf such as an
	// inline image) of at most this many bytes comes inline in body.data
	// without an attachmentId, as Gmail sends small attachments. 0 means
	// DefaultInlineMax; negative gives every attachment an id.
	InlineMax int
	Logger    *slog.Logger // nil = discard; the server never writes to stdout
}

// Server is the fake Gmail. All methods are safe for concurrent use.
type Server struct {
	o   Options
	log *slog.Logger

	mu sync.RWMutex // guards st and oa
	st *store
	oa *oauthState

	fmu    sync.Mutex // guards faults
	faults []*Fault

	amu   sync.Mutex // guards accounting
	calls map[string]int
	total int

	latency  atomic.Int64 // time.Duration
	concCap  atomic.Int64
	inflight atomic.Int64
	conns    atomic.Int64 // open client connections (ConnState)

	hmu  sync.Mutex // guards the listener and base URL
	hs   *http.Server
	base string
}

// New returns an empty mailbox for o.Email.
func New(o Options) *Server {
	if o.Email == "" {
		o.Email = "me@sandbox.local"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{o: o, log: o.Logger, st: newStore(), oa: newOAuthState(), calls: map[string]int{}}
}

// DefaultInlineMax is Options.InlineMax's default. Gmail does not publish
// its cut-off; 100 bytes puts some of the sandbox's attachments inline and
// gives the others ids, so both shapes are exercised everywhere.
const DefaultInlineMax = 100

func (s *Server) inlineMax() int {
	switch {
	case s.o.InlineMax < 0:
		return -1
	case s.o.InlineMax == 0:
		return DefaultInlineMax
	}
	return s.o.InlineMax
}

// Email is the mailbox owner's address.
func (s *Server) Email() string { return s.o.Email }

func (s *Server) now() time.Time { return s.o.Now() }

// Start listens on addr (e.g. "127.0.0.1:0") and serves in a goroutine. The
// returned base URL ends in "/", ready for option.WithEndpoint.
func (s *Server) Start(addr string) (string, error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.hs != nil {
		return "", errors.New("localgmail: already started")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.hs = &http.Server{Handler: s, ConnState: s.ConnState, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.base = "http://" + ln.Addr().String() + "/"
	go s.hs.Serve(ln)
	return s.base, nil
}

// Close stops a started server. It is a no-op before Start.
func (s *Server) Close() error {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.hs == nil {
		return nil
	}
	err := s.hs.Close()
	s.hs = nil
	return err
}

// URL is the base URL ("http://127.0.0.1:PORT/") after Start or SetBaseURL,
// "" before.
func (s *Server) URL() string {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return s.base
}

// SetBaseURL sets the base used by URL, AuthURL and TokenURL when the server
// is mounted elsewhere (e.g. httptest.NewServer(srv)).
func (s *Server) SetBaseURL(u string) {
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	s.hmu.Lock()
	s.base = u
	s.hmu.Unlock()
}

// call is one Gmail API request on its way through a handler.
type call struct {
	r      *http.Request
	op     string
	params map[string]string
	upload bool    // arrived on /upload/gmail/v1/…
	tok    *access // nil when auth is not required
	meta   bool    // the token's scopes restrict it to metadata (gmail.metadata)
}

func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// ServeHTTP runs the pipeline every request goes through: accounting,
// latency, concurrency cap, injected faults, user and token checks, then the
// operation itself.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var op string
	var status int
	defer func() {
		s.log.Debug("localgmail request", "method", r.Method, "path", r.URL.Path, "op", op, "status", status, "elapsed", time.Since(start))
	}()
	switch {
	case r.URL.Path == "/token":
		op = "token"
	case r.URL.Path == "/o/oauth2/auth":
		op = "authorize"
	}
	rt, user, params, api, upload := match(r)
	if rt != nil {
		op = rt.op
	}
	s.count(op, op != "token" && op != "authorize")
	arrived := int64(0)
	if op != "token" && op != "authorize" {
		arrived = s.inflight.Add(1)
		defer s.inflight.Add(-1)
	}
	if d := time.Duration(s.latency.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if c := s.concCap.Load(); c > 0 && arrived > c {
		status = 429
		writeAPIError(w, apiErr(429, "rateLimitExceeded", "Too many concurrent requests for user."))
		return
	}
	if op == "" {
		status = 404
		msg := "Method not found."
		if !api {
			msg = "Requested entity was not found."
		}
		writeAPIError(w, apiErr(404, "notFound", msg))
		return
	}
	f := s.takeFault(op)
	if f != nil && f.Hold != nil {
		select {
		case <-f.Hold:
		case <-r.Context().Done():
			return
		}
		f = nil
	}
	if f != nil && !f.Drop && !f.Stall {
		status = answerFault(w, op, f)
		return
	}
	out := w
	if f != nil {
		out = &discardWriter{} // Drop, Stall: do the work, answer nothing
		defer dropConnection(w)
		if f.Stall {
			defer func() { <-r.Context().Done() }() // runs before the drop
		}
	}
	switch op {
	case "token":
		status = s.handleToken(out, r)
	case "authorize":
		status = s.handleAuthorize(out, r)
	default:
		status = s.serveAPI(out, r, &call{r: r, op: op, params: params, upload: upload}, rt, user)
	}
	if f != nil {
		status = -1 // dropped
	}
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, c *call, rt *route, user string) int {
	fail := func(e *apiError) int { writeAPIError(w, e); return e.status }
	if s.o.RequireAuth {
		tok, e := s.authenticate(r)
		if e != nil {
			return fail(e)
		}
		if !tok.allows(rt.scopes) {
			return fail(apiErr(403, "insufficientPermissions", "Request had insufficient authentication scopes."))
		}
		c.tok, c.meta = tok, tok.metadataOnly()
	}
	if user != "me" && !strings.EqualFold(user, s.o.Email) {
		return fail(apiErr(403, "forbidden", "Delegation denied for "+s.o.Email))
	}
	v, err := handlers[rt.op].h(s, c)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = apiErr(500, "backendError", "Backend Error")
		}
		return fail(ae)
	}
	if v == nil {
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	}
	writeJSON(w, 200, v)
	return 200
}

func (s *Server) count(op string, api bool) {
	s.amu.Lock()
	defer s.amu.Unlock()
	s.calls[op]++
	if api {
		s.total++
	}
}

// Calls is the number of requests received for op (a method's discovery id
// without "gmail.users.": "messages.get", "getProfile"), including faulted,
// capped and failed ones.
func (s *Server) Calls(op string) int {
	s.amu.Lock()
	defer s.amu.Unlock()
	return s.calls[op]
}

// InFlight is the number of API requests being handled now. A client that
// died mid-request leaves its request running here for a while: the crash
// tests wait for none before they let a second process look for its work.
func (s *Server) InFlight() int { return int(s.inflight.Load()) }

// ConnState counts the open client connections; it is the http.Server's
// ConnState hook (set by Start; gmailschema.Serve sets it on its server).
func (s *Server) ConnState(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.conns.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.conns.Add(-1)
	}
}

// OpenConns is the number of client connections the server holds open. A
// request a killed client had written but the server had not yet begun
// (not InFlight) still lands; the connection closes only after it: the
// crash tests wait for none open, not only none in flight.
func (s *Server) OpenConns() int { return int(s.conns.Load()) }

// TotalCalls counts every Gmail API request (anything but /token and the
// authorization endpoint), including unknown routes.
func (s *Server) TotalCalls() int {
	s.amu.Lock()
	defer s.amu.Unlock()
	return s.total
}

// QuotaUnits is the Gmail quota the requests so far would have cost, every
// received request charged at its operation's rate (gmail-api.md §3).
func (s *Server) QuotaUnits() int {
	s.amu.Lock()
	defer s.amu.Unlock()
	n := 0
	for op, c := range s.calls {
		n += handlers[op].units * c
	}
	return n
}

// ResetCounters zeroes Calls, TotalCalls, QuotaUnits and TokenRequests, so a
// test can measure one phase after seeding.
func (s *Server) ResetCounters() {
	s.amu.Lock()
	s.calls, s.total = map[string]int{}, 0
	s.amu.Unlock()
}
