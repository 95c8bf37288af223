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
	"net/url"
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
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
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

// handler returns the value to marshal (nil: 204 No Content) or an error.
type handler func(s *Server, c *call) (any, error)

type route struct {
	method, pattern, op string
	h                   handler
	upload              bool // also served under /upload/gmail/v1/users/{user}/
}

var routes = []route{
	{"GET", "messages", "messages.list", (*Server).listMessages, false},
	{"POST", "messages", "messages.insert", (*Server).insertMessage, true},
	{"POST", "messages/send", "messages.send", (*Server).sendMessage, true},
	{"GET", "messages/{id}", "messages.get", (*Server).getMessage, false},
	{"GET", "messages/{mid}/attachments/{id}", "attachments.get", (*Server).getAttachment, false},
	{"POST", "messages/batchModify", "messages.batchModify", (*Server).batchModify, false},
	{"POST", "messages/{id}/modify", "messages.modify", organise(false, actModify), false},
	{"POST", "messages/{id}/trash", "messages.trash", organise(false, actTrash), false},
	{"POST", "messages/{id}/untrash", "messages.untrash", organise(false, actUntrash), false},
	{"GET", "threads", "threads.list", (*Server).listThreads, false},
	{"GET", "threads/{id}", "threads.get", (*Server).getThread, false},
	{"POST", "threads/{id}/modify", "threads.modify", organise(true, actModify), false},
	{"POST", "threads/{id}/trash", "threads.trash", organise(true, actTrash), false},
	{"POST", "threads/{id}/untrash", "threads.untrash", organise(true, actUntrash), false},
	{"GET", "drafts", "drafts.list", (*Server).listDrafts, false},
	{"POST", "drafts", "drafts.create", (*Server).createDraft, true},
	{"POST", "drafts/send", "drafts.send", (*Server).sendDraft, true},
	{"GET", "drafts/{id}", "drafts.get", (*Server).getDraft, false},
	{"PUT", "drafts/{id}", "drafts.update", (*Server).updateDraft, true},
	{"DELETE", "drafts/{id}", "drafts.delete", (*Server).deleteDraft, false},
	{"GET", "labels", "labels.list", (*Server).listLabels, false},
	{"POST", "labels", "labels.create", (*Server).createLabel, false},
	{"GET", "labels/{id}", "labels.get", (*Server).getLabel, false},
	{"PATCH", "labels/{id}", "labels.patch", (*Server).patchLabel, false}, // settings.go
	{"DELETE", "labels/{id}", "labels.delete", (*Server).deleteLabel, false},
	{"GET", "settings/filters", "settings.filters.list", (*Server).listFilters, false},
	{"POST", "settings/filters", "settings.filters.create", (*Server).createFilter, false},
	{"GET", "settings/filters/{id}", "settings.filters.get", (*Server).getFilter, false},
	{"DELETE", "settings/filters/{id}", "settings.filters.delete", (*Server).deleteFilter, false},
	{"GET", "settings/vacation", "settings.getVacation", (*Server).getVacation, false},
	{"PUT", "settings/vacation", "settings.updateVacation", (*Server).updateVacation, false},
	{"GET", "profile", "profile", (*Server).getProfile, false},
	{"GET", "settings/sendAs", "settings.sendAs.list", (*Server).listSendAs, false},
	{"GET", "settings/forwardingAddresses", "settings.forwardingAddresses.list", (*Server).listForwarding, false}, // forwarding.go
	{"POST", "settings/forwardingAddresses", "settings.forwardingAddresses.create", (*Server).createForwarding, false},
	{"GET", "settings/forwardingAddresses/{id}", "settings.forwardingAddresses.get", (*Server).getForwarding, false},
	{"DELETE", "settings/forwardingAddresses/{id}", "settings.forwardingAddresses.delete", (*Server).deleteForwarding, false},
}

// quotaUnits per operation, from gmail-api.md §3 (and Gmail's published table
// for the ones the notes do not list).
var quotaUnits = map[string]int{
	"messages.list": 5, "messages.get": 5, "attachments.get": 5, "threads.get": 10, "threads.list": 10,
	"drafts.create": 10, "drafts.send": 100, "drafts.get": 5, "drafts.delete": 10,
	"messages.send": 100, "messages.insert": 25, "labels.list": 1, "labels.create": 5, "profile": 1,
	"drafts.list": 5, "drafts.update": 15, "labels.get": 1, "settings.sendAs.list": 1,
	"messages.modify": 5, "messages.batchModify": 50, "threads.modify": 10,
	"messages.trash": 5, "messages.untrash": 5, "threads.trash": 10, "threads.untrash": 10,
	"labels.patch": 5, "labels.delete": 5, "settings.filters.list": 1, "settings.filters.get": 1,
	"settings.filters.create": 5, "settings.filters.delete": 5, "settings.getVacation": 1, "settings.updateVacation": 5,
	"settings.forwardingAddresses.list": 1, "settings.forwardingAddresses.get": 1,
	"settings.forwardingAddresses.create": 100, "settings.forwardingAddresses.delete": 5,
}

// match resolves the request to a route. api reports a /gmail/ or /upload/
// path; rt is nil for an unknown route.
func match(r *http.Request) (rt *route, user string, params map[string]string, api, upload bool) {
	var segs []string
	for _, p := range strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/") {
		u, err := url.PathUnescape(p)
		if err != nil {
			u = p
		}
		segs = append(segs, u)
	}
	if len(segs) > 0 && segs[0] == "upload" {
		upload, segs = true, segs[1:]
	}
	if len(segs) < 4 || segs[0] != "gmail" || segs[1] != "v1" || segs[2] != "users" {
		return nil, "", nil, len(segs) > 0 && segs[0] == "gmail" || upload, upload
	}
	user, rest := segs[3], segs[4:]
	for i := range routes {
		rt := &routes[i]
		if rt.method != r.Method || (upload && !rt.upload) {
			continue
		}
		pat := strings.Split(rt.pattern, "/")
		if len(pat) != len(rest) {
			continue
		}
		params = map[string]string{}
		ok := true
		for j, p := range pat {
			if strings.HasPrefix(p, "{") {
				params[strings.Trim(p, "{}")] = rest[j]
			} else if p != rest[j] {
				ok = false
				break
			}
		}
		if ok {
			return rt, user, params, true, upload
		}
	}
	return nil, user, nil, true, upload
}

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
		if !tok.allows(c.op) {
			return fail(apiErr(403, "insufficientPermissions", "Request had insufficient authentication scopes."))
		}
		c.tok, c.meta = tok, tok.metadataOnly()
	}
	if user != "me" && !strings.EqualFold(user, s.o.Email) {
		return fail(apiErr(403, "forbidden", "Delegation denied for "+s.o.Email))
	}
	v, err := rt.h(s, c)
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

// Calls is the number of requests received for op, including faulted,
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
		n += quotaUnits[op] * c
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
