// Package approvalweb serves the local approval page (mailgate approvals
// --web): the vault's pending requests shown as the recipient will see
// them, decided with a click. The vault stays the one source of truth: the
// page reads the request files, and approving or rejecting is the same move
// into Approved/ or Rejected/ that a file manager or `mailgate approvals
// approve` makes (approval.Vault.ApproveAs/RejectAs), with the page named
// in the file (decided_via) and in the audit log.
//
// Safety, because a page that approves email is worth attacking:
//   - it listens on 127.0.0.1 only (a random port), and answers only
//     requests whose Host is exactly that address (no DNS rebinding);
//   - the URL it prints carries a secret, good once: the first load
//     exchanges it for a session cookie (HttpOnly, SameSite=Strict) and the
//     page redirects to a URL without it; without the cookie the page shows
//     nothing but how to get in. The secret and the cookie are never logged;
//   - every state change is a POST carrying the session's CSRF token, from
//     the page's own Origin (a cross-site form or fetch changes nothing);
//   - a strict Content-Security-Policy: scripts only from the page itself,
//     no inline script, nothing from the network; the email's HTML is shown
//     in a sandboxed frame (sandbox="", no script, no navigation of the page)
//     whose content has its own CSP default-src 'none', so nothing it names
//     is fetched, and the page lists what a mail client would have fetched;
//   - no MCP tool reaches it: it is a command a human runs, not a tool.
package approvalweb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
)

//go:embed assets
var assets embed.FS

// Recorder appends audit lines (audit.Log).
type Recorder interface{ Record(audit.Entry) error }

// Options configure a Server.
type Options struct {
	Vault *approval.Vault
	// Audit receives one line per decision; nil writes none.
	Audit Recorder
	// Status says what the running servers do with an approval (DEV_MODE,
	// limit, slots left), one line each; nil shows nothing.
	Status func(ctx context.Context) []string
	// Check marks approvals the gate can never use (approval.MarkDead);
	// nil marks none.
	Check func(ctx context.Context, items []approval.Item)
	// Attachments is the attachment folder, for previews; "" shows none.
	Attachments string
	// Poll is how often the vault is looked at for the live list
	// (default 500ms).
	Poll   time.Duration
	Now    func() time.Time
	Logger *slog.Logger
}

// Server is one approval page.
type Server struct {
	o      Options
	tmpl   *template.Template
	addr   string // host:port, exactly as the URL names it
	origin string // http://addr
	secret string

	mu       sync.Mutex
	used     bool              // the URL's secret was exchanged
	sessions map[string]string // session cookie → CSRF token
	changed  chan struct{}     // closed (and replaced) when the vault changes
	version  int
}

const cookieName = "mailgate_approvals"

// New prepares a page; Listen binds it.
func New(o Options) (*Server, error) {
	if o.Vault == nil {
		return nil, errors.New("approvalweb: no vault")
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	t, err := template.New("page").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	return &Server{o: o, tmpl: t, secret: randomToken(), sessions: map[string]string{}, changed: make(chan struct{})}, nil
}

func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Listen binds 127.0.0.1 on a random port (or addr, which must be a
// loopback address) and returns the URL to open, secret included.
func (s *Server) Listen(addr string) (net.Listener, string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, "", fmt.Errorf("the approval page listens on a loopback address only, not %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	s.addr = ln.Addr().String()
	s.origin = "http://" + s.addr
	return ln, s.origin + "/?s=" + s.secret, nil
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.watch(ctx)
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx }, // ends the live streams
		ErrorLog:          slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelWarn),
	}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler is the page's HTTP handler (Listen first: it knows its address).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /request", s.authed(s.request))
	mux.HandleFunc("GET /list", s.authed(s.listFragment))
	mux.HandleFunc("GET /still", s.authed(s.still))
	mux.HandleFunc("GET /events", s.authed(s.events))
	mux.HandleFunc("POST /approve", s.authed(s.post(true)))
	mux.HandleFunc("POST /reject", s.authed(s.post(false)))
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return s.guard(mux)
}

// contentSecurityPolicy is the page's: its own script and style only,
// images only as data: (attachment previews), no connection but to itself,
// and no form posting elsewhere. The email's frame is srcdoc (inherits this
// policy, and adds default-src 'none').
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; " +
	"frame-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// guard refuses every request not addressed to the page's own host (DNS
// rebinding: a name that resolves to 127.0.0.1 carries its own Host) and
// sets the headers every answer carries.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with the page's own forms, which sameOrigin refuses.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Host != s.addr {
			http.Error(w, "wrong host: this page answers only to "+s.addr, http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// session returns the CSRF token of the request's session, "" without one.
func (s *Server) session(r *http.Request) string {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// authed lets through requests of a session; others get nothing.
func (s *Server) authed(next func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		csrf := s.session(r)
		if csrf == "" {
			http.Error(w, "no session: open the URL mailgate approvals --web printed", http.StatusForbidden)
			return
		}
		next(w, r, csrf)
	}
}

// index exchanges the URL's secret for a session, or shows the list.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query().Get("s"); q != "" {
		if s.session(r) != "" { // already in: drop the secret from the address bar
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		s.mu.Lock()
		ok := !s.used && subtle.ConstantTimeCompare([]byte(q), []byte(s.secret)) == 1
		var sid string
		if ok {
			s.used = true
			sid = randomToken()
			s.sessions[sid] = randomToken()
		}
		s.mu.Unlock()
		if !ok {
			s.render(w, http.StatusForbidden, "locked", lockedData{Used: true})
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	csrf := s.session(r)
	if csrf == "" {
		s.render(w, http.StatusForbidden, "locked", lockedData{})
		return
	}
	s.renderList(w, r, csrf, "index")
}

type lockedData struct{ Used bool }

func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := s.tmpl.ExecuteTemplate(w, name, data); err != nil {
		s.o.Logger.Warn("approval page: rendering", "template", name, "err", err)
	}
}

func (s *Server) listFragment(w http.ResponseWriter, r *http.Request, csrf string) {
	s.renderList(w, r, csrf, "list")
}

// renderList renders the template name (the whole page, or the list
// fragment it reloads) over the vault's requests.
func (s *Server) renderList(w http.ResponseWriter, r *http.Request, csrf, name string) {
	data, err := s.listData(r.Context(), csrf)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.render(w, http.StatusOK, name, data)
}

// still answers 204 while the request is where the page showed it, 410
// once it left (decided elsewhere): the detail page says so live.
func (s *Server) still(w http.ResponseWriter, r *http.Request, _ string) {
	folder, name := r.URL.Query().Get("folder"), r.URL.Query().Get("name")
	if !knownFolder(folder) || name != filepath.Base(name) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if _, err := os.Lstat(filepath.Join(s.o.Vault.Root(), folder, name)); err != nil {
		w.WriteHeader(http.StatusGone)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func knownFolder(f string) bool {
	switch f {
	case approval.DirPending, approval.DirApproved, approval.DirRejected, approval.DirDone:
		return true
	}
	return false
}

// events is the live stream (server-sent events): one "changed" event
// each time the vault's folders change.
func (s *Server) events(w http.ResponseWriter, r *http.Request, _ string) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	keep := time.NewTicker(20 * time.Second)
	defer keep.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-ch:
			s.mu.Lock()
			v := s.version
			s.mu.Unlock()
			fmt.Fprintf(w, "event: changed\ndata: %d\n\n", v)
		}
		fl.Flush()
	}
}

// watch looks at the vault's folders every Poll and wakes the live streams
// when anything in them changed.
func (s *Server) watch(ctx context.Context) {
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	last := s.signature()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if sig := s.signature(); sig != last {
			last = sig
			s.mu.Lock()
			s.version++
			close(s.changed)
			s.changed = make(chan struct{})
			s.mu.Unlock()
		}
	}
}

func (s *Server) signature() string {
	h := sha256.New()
	for _, d := range approval.ListFolders {
		es, _ := os.ReadDir(filepath.Join(s.o.Vault.Root(), d))
		names := make([]string, 0, len(es))
		for _, e := range es {
			if fi, err := e.Info(); err == nil {
				names = append(names, fmt.Sprintf("%s %d %d", e.Name(), fi.Size(), fi.ModTime().UnixNano()))
			}
		}
		sort.Strings(names)
		fmt.Fprintf(h, "%s\n%s\n", d, strings.Join(names, "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sameOrigin: a state change must come from the page itself. Browsers send
// Origin with every POST; one without it, or from anywhere else, is refused
// (as is one a browser marks cross-site).
func (s *Server) sameOrigin(r *http.Request) bool {
	if r.Header.Get("Origin") != s.origin {
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin":
		return true
	}
	return false
}
