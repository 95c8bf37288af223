package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/drafts"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/mcpstdio"
	"github.com/mailgate/mailgate/internal/metrics"
	"github.com/mailgate/mailgate/internal/presence"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/sandbox"
	"github.com/mailgate/mailgate/internal/startgc"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/tmux"
)

// serve runs the MCP server over stdio until stdin closes or a signal
// arrives.
func serve(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	useSandbox := fs.Bool("sandbox", false, "serve the built-in sandbox mailbox instead of Gmail (no Google account needed)")
	logVar, _ := config.Lookup("MAILGATE_LOG_LEVEL")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (MAILGATE_LOG_LEVEL; default "+logVar.DefaultText()+")")
	var httpMode optionalValue
	fs.Var(&httpMode, "http", "serve MCP over HTTP instead of stdio, on ADDR (--http=ADDR or --http ADDR; default AGENT_MAIL_HTTP_ADDR)")
	public := fs.Bool("public", false, "with --http: allow an address other machines can reach (never without the bearer token)")
	cfg, err := loadConfig(fs, joinHTTPAddr(args), env)
	if err != nil {
		return helpOrError(fs, err, env.stdout)
	}
	// serve takes no argument but --http's address (joined to the flag
	// above); anything else (serve sandbox, for serve --sandbox) is a
	// mistake, not ignored.
	if fs.NArg() > 0 {
		return usageError("serve", "unexpected argument %q", fs.Arg(0))
	}
	logger, err := newLogger(env.stderr, firstNonEmpty(*logLevel, env.getenv("MAILGATE_LOG_LEVEL")))
	if err != nil {
		return err
	}

	if *public && !httpMode.set {
		return usageError("serve", "--public is for serve --http: a stdio server has no address")
	}
	if httpMode.set {
		addr := httpMode.value
		if addr == "" {
			addr = cfg.HTTPAddr
		}
		return serveHTTP(ctx, env, cfg, logger, addr, *useSandbox, *public)
	}

	// Claim stdout for the protocol before anything else can print.
	out := env.stdout
	if f, ok := env.stdout.(*os.File); ok && f == os.Stdout {
		if out, err = protocolStdout(); err != nil {
			return err
		}
	}

	// Starting allocates a few MiB that are garbage at once (go-sdk parses
	// every tool schema it is given; the store's migrations): from the
	// runtime's 4 MiB first heap target, the collector ran two or three
	// times before the first answer, its workers taking the cores the start
	// needs. It runs at startGCPercent until the store is open, then at
	// stdioGCPercent (a GOGC the user set stays theirs throughout).
	restoreGC := setGCPercent(env.getenv, startGCPercent)
	defer restoreGC()
	// The server answers initialize while the store opens: the tools that
	// need it wait for it (mcpserver.Deps.Pending). A store that cannot
	// open still stops the server, with the same error, as soon as it fails.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opened := make(chan struct{})
	var app *app
	var deps mcpserver.Deps
	var openErr error
	openDepsInBackground := func() {
		defer close(opened)
		defer setGCPercent(env.getenv, stdioGCPercent)
		app, deps, openErr = openDeps(ctx, env, cfg, logger, *useSandbox)
		if openErr == nil {
			if openErr = app.announce(ctx, cfg, logger, "stdio", *useSandbox); openErr == nil {
				logger.Info("mailgate serving over stdio", app.startAttrs(cfg)...)
			}
		}
		if openErr != nil {
			cancel(errOpening{openErr})
		}
	}
	defer func() {
		<-opened
		if app != nil {
			app.Close()
		}
	}()
	srv, err := mcpserver.New(mcpserver.Deps{Version: versionString(), Logger: logger, Tools: cfg.Tools, AgentMailProfile: cfg.ToolsProfile,
		Pending: func(ctx context.Context) (mcpserver.Deps, error) {
			select {
			case <-opened:
				return deps, openErr
			case <-ctx.Done():
				return mcpserver.Deps{}, ctx.Err()
			}
		}})
	if err != nil {
		close(opened)
		return err
	}
	// The store opens, and the mailbox set's tmux client starts, once the
	// first answer (initialize's) is written, not while it is being
	// prepared: on two cores the store's migrations, SQLite's page cache and
	// the tmux client's fork took the CPU and the page faults the first
	// answer needed. The client reads that answer and sends its next
	// requests while the store opens. A client that says nothing still has
	// its store opened (and a store that cannot open still ends the
	// server) after startQuietWait, or when it leaves.
	var startOnce sync.Once
	startRest := func() {
		startOnce.Do(func() {
			go openDepsInBackground()
			// The mailbox set's clients live in tmux windows: when the tmux
			// session ends, the server must end too (exit status 1), not linger.
			if cfg.HasTools(config.ToolsMailbox) {
				go func() {
					if err := tmux.WatchSession(runCtx, env.getenv, 0); err != nil {
						logger.Error("tmux session ended; exiting", "err", err)
						cancel(err)
					}
				}()
			}
		})
	}
	quiet := time.AfterFunc(startQuietWait, startRest)
	defer quiet.Stop()
	runErr := srv.Run(runCtx, &mcpstdio.Transport{Reader: env.stdin, Writer: afterFirstWrite(out, startRest), Logger: logger})
	startRest() // the client left before any answer
	// A client that left before the store opened does not hide a store
	// that cannot open: the process still ends with its error.
	<-opened
	var opening errOpening
	if cause := context.Cause(runCtx); errors.Is(cause, tmux.ErrWatchedSessionEnded) {
		return cause
	} else if errors.As(cause, &opening) {
		return opening.err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) && !errors.Is(runErr, io.EOF) {
		return fmt.Errorf("serving: %w", runErr)
	}
	return nil
}

// startGCPercent is the collector's target (GOGC) of a stdio server until
// its store is open, when GOGC is not set (see serve). A serve process has
// it from its package initialisation on (internal/startgc).
const startGCPercent = startgc.Percent

// stdioGCPercent is the collector's target (GOGC) of a stdio server once
// its store is open, when GOGC is not set. Most of what a tool call
// allocates is garbage at once: go-sdk decodes each call's parameters
// twice more, each time with a new 32 KiB buffer (70% of the bytes
// allocated per send_message), while a few MiB stay live, so at the
// default of 100 the collector ran every few dozen calls. At 200 it runs
// half as often: 15–20% less server CPU per send_message for about 4 MiB
// more peak RSS (BENCHMARKS.md, issue 29; 400 saved no more and cost 12).
const stdioGCPercent = 200

// startQuietWait is how long a stdio server whose client has not been
// answered yet waits before opening its store anyway (see serve).
const startQuietWait = 100 * time.Millisecond

// afterFirstWrite returns w calling f once, after its first Write.
func afterFirstWrite(w io.Writer, f func()) io.Writer {
	return &firstWriteHook{w: w, f: f}
}

type firstWriteHook struct {
	w    io.Writer
	once sync.Once
	f    func()
}

func (h *firstWriteHook) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.once.Do(h.f)
	return n, err
}

// errOpening is the cause that ends a stdio server whose dependencies did
// not open.
type errOpening struct{ err error }

func (e errOpening) Error() string { return e.err.Error() }

// loadConfig loads the configuration as every command does. When the home
// is the per-user default and the working directory holds an older home
// (the default used to be the working directory), it says so in one line
// on stderr, with the way to move it: that data is not abandoned silently.
func loadConfig(fs *flag.FlagSet, args []string, env *environment) (*config.Config, error) {
	cwd, err := env.workDir()
	if err != nil {
		cwd = "/"
	}
	cfg, err := config.Load(fs, args, env.getenv, cwd)
	if err != nil {
		return nil, err
	}
	if found := cfg.LegacyHome(cwd); len(found) > 0 {
		fmt.Fprintf(env.stderr, "mailgate: %s holds an older mailgate home (%s), which is no longer used: this command uses %s. "+
			"Move it there with \"mailgate home --migrate-from %s\", or keep using it with MAILGATE_HOME=%s.\n",
			cwd, strings.Join(found, ", "), cfg.Home, cwd, cwd)
	}
	return cfg, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return nil, &config.Error{Var: "MAILGATE_LOG_LEVEL", Msg: fmt.Sprintf("%q is not one of debug, info, warn, error", level)}
		}
	}
	// A line logged with a tool call's context carries its request_id.
	return slog.New(metrics.LogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))), nil
}

// app is everything a serving process holds open.
type app struct {
	Server  *mcp.Server
	Gmail   *gmail.Client // set when the email tools are served and connected (the mirror reuses it)
	DB      *store.DB     // for readiness checks (serve --http)
	gmail   string        // the mailbox's state for the start line; "" when the email tools are not served
	notice  string        // a new store beside a vault with history (restoreHistory); readiness says it
	sandbox bool          // the email tools serve the sandbox mailbox
	closers []func() error
}

// startAttrs are the attributes of the one line a server logs at start at
// info level: what it serves, where its home is, what an approval does,
// and whether Gmail is connected. Everything else a healthy start does is
// logged at debug.
func (a *app) startAttrs(cfg *config.Config, more ...any) []any {
	attrs := append([]any{"version", versionString(), "tools", strings.Join(cfg.Tools, ",")}, more...)
	attrs = append(attrs, "home", cfg.Home)
	if a.gmail != "" {
		attrs = append(attrs, "gmail", a.gmail)
		if a.sandbox {
			attrs = append(attrs, "dev_mode", fmt.Sprintf("DEV_MODE=%t does not apply to the sandbox: approved emails are delivered into the sandbox mailbox", cfg.DevMode))
		} else if cfg.DevMode {
			attrs = append(attrs, "dev_mode", "on: every gate runs, nothing is sent or drafted (to send: mailgate config set DEV_MODE false)")
		} else {
			attrs = append(attrs, "dev_mode", "off: approved emails are sent")
		}
	}
	return append(attrs, "db", store.Describe(cfg.DB))
}

func (a *app) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// announce records this server in the store's presence table until Close,
// so that `mailgate approvals` can say what the running servers will do
// with an approval. A server that cannot record itself does not start:
// otherwise the terminal would say no server is running while one sends.
func (a *app) announce(ctx context.Context, cfg *config.Config, logger *slog.Logger, transport string, useSandbox bool) error {
	mailbox := "gmail"
	switch {
	case useSandbox:
		mailbox = "sandbox"
	case cfg.GmailEndpoint != "":
		mailbox = cfg.GmailEndpoint
	}
	reg, err := presence.Register(ctx, a.DB, presence.Server{
		DevMode: cfg.DevMode, SendLimit: cfg.SendLimit, ApprovalMode: cfg.ApprovalMode, Vault: cfg.VaultPath,
		Transport: transport, Tools: strings.Join(cfg.Tools, ","), Mailbox: mailbox, Version: versionString(),
	}, presence.Options{Logger: logger})
	if err != nil {
		return err
	}
	a.closers = append(a.closers, reg.Close)
	return nil
}

// openDeps opens every dependency the configuration asks for: the store,
// the email set's and the agent-mail store. The channels and mailbox sets
// read the run's environment (TMUX, TMUX_PANE, AGENT_NAME) and find their
// default project from its working directory: a process's own, or those a
// test gives a run in-process.
func openDeps(ctx context.Context, env *environment, cfg *config.Config, logger *slog.Logger, useSandbox bool) (_ *app, _ mcpserver.Deps, err error) {
	a := &app{}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		if store.IsPostgres(cfg.DB) {
			return nil, mcpserver.Deps{}, fmt.Errorf("MAILGATE_DB: %w", err) // the error names the server, without the password
		}
		return nil, mcpserver.Deps{}, fmt.Errorf("MAILGATE_DB %s: %w", cfg.DB, err)
	}
	a.closers = append(a.closers, db.Close)
	a.DB = db

	deps := mcpserver.Deps{Version: versionString(), Logger: logger, Tools: cfg.Tools, AgentMailProfile: cfg.ToolsProfile,
		SetOptions: mcpserver.SetOptions{Getenv: env.getenv, Dir: env.dir}}
	if cfg.HasTools(config.ToolsEmail) {
		if deps.Email, err = openEmail(ctx, cfg, logger, db, useSandbox, a); err != nil {
			return nil, mcpserver.Deps{}, err
		}
	}
	// The agent-mail store backs the agentmail, channels and mailbox sets.
	if cfg.HasTools(config.ToolsAgentMail) || cfg.HasTools(config.ToolsChannels) || cfg.HasTools(config.ToolsMailbox) {
		if deps.AgentMail, deps.SetStores, err = amstore.NewServiceStore(ctx, db, agentmail.Options{Logger: logger, NameMode: agentmail.NameMode(cfg.NameMode), BindSenders: cfg.BindSenders, Protected: protectedPaths(cfg),
			Escalation: escalationOptions(cfg)}); err != nil {
			return nil, mcpserver.Deps{}, fmt.Errorf("opening the agent-mail store: %w", err)
		}
		a.closers = append(a.closers, deps.AgentMail.Close) // before the DB: it indexes what it queued
		startEscalations(a, deps.AgentMail)
	}
	if err := startMirror(ctx, cfg, logger, db, a); err != nil {
		return nil, mcpserver.Deps{}, err
	}
	return a, deps, nil
}

func openEmail(ctx context.Context, cfg *config.Config, logger *slog.Logger, db *store.DB, useSandbox bool, a *app) (*mcpserver.EmailDeps, error) {
	// The ledger records every request the server issued: in content mode
	// only those are honoured, so a file an agent writes straight into
	// Approved/ approves nothing.
	ledger, err := approval.NewStoreLedger(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("opening the approval ledger: %w", err)
	}
	vault, err := approval.Open(cfg.VaultPath, approval.Options{Mode: approval.Mode(cfg.ApprovalMode), TTL: cfg.ApprovalTTL, Ledger: ledger})
	if err != nil {
		return nil, fmt.Errorf("VAULT_PATH %s: %w", cfg.VaultPath, err)
	}
	// A process killed mid-write leaves a hidden temporary file in the vault.
	// Old ones are swept in the background: listing a large Done/ must not
	// delay the first answer. Close waits for the sweep.
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		n, err := vault.SweepTemp(time.Hour)
		if err != nil {
			logger.Warn("sweeping leftover temporary files in the vault", "err", err)
		}
		if n > 0 {
			logger.Info("removed leftover temporary files from the vault", "count", n)
		}
	}()
	a.closers = append(a.closers, func() error { <-swept; return nil })
	auditLog, err := audit.Open(cfg.AuditDir)
	if err != nil {
		return nil, fmt.Errorf("AUDIT_LOG_DIR %s: %w", cfg.AuditDir, err)
	}
	a.closers = append(a.closers, auditLog.Close)
	limiter, err := ratelimit.New(ctx, db, cfg.SendLimit, time.Hour)
	if err != nil {
		return nil, fmt.Errorf("opening the send limiter: %w", err)
	}
	// Slots are aged by the machine's clock since boot too, so a wall
	// clock that steps neither blocks sends for the length of the step nor
	// grants a new quota (ratelimit's package comment).
	limiter.SetMonotonic(ratelimit.SystemClock)
	if db.Fresh {
		if a.notice, err = restoreHistory(ctx, cfg, logger, db, limiter); err != nil {
			return nil, err
		}
	}
	organizeLimiter, err := ratelimit.NewBucket(ctx, db, ratelimit.BucketOrganize, cfg.OrganizeLimit, time.Hour)
	if err != nil {
		return nil, fmt.Errorf("opening the organise limiter: %w", err)
	}
	organizeLimiter.SetMonotonic(ratelimit.SystemClock)
	myDrafts, err := drafts.New(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("opening the drafts record: %w", err)
	}
	gopts := gmail.Options{
		CredentialsFile: cfg.CredentialsFile,
		TokenFile:       cfg.TokenFile,
		Endpoint:        cfg.GmailEndpoint,
		Logger:          logger,
	}
	workEndpoint := "" // the sandbox's second account
	if useSandbox {
		mb, err := sandbox.Open(sandboxDir(cfg), logger)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, mb.Close)
		gopts.Endpoint = mb.URL()
		gopts.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "sandbox", TokenType: "Bearer"})
		logger.Debug("sandbox mailbox started", "address", sandbox.Email, "endpoint", mb.URL())
		kept := "kept in " + mb.Path() + ", as the last sandbox server left it"
		if !mb.Kept() {
			kept = "new, kept from now on in " + mb.Path()
		}
		a.gmail = "sandbox mailbox " + sandbox.Email + " (local; nothing leaves this machine; " + kept + ")"
		a.sandbox = true
		// A second account, "work", with a mailbox of its own: the email
		// tools' account argument can be tried without Google.
		wmb, err := sandbox.OpenWork(sandboxDir(cfg), logger)
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, wmb.Close)
		workEndpoint = wmb.URL()
		a.gmail += "; account " + sandbox.WorkAccount + ": " + sandbox.WorkEmail
	}
	// The sandbox delivers approved emails into its own mailbox whatever
	// DEV_MODE says: nothing can leave the machine, and trying the sandbox
	// must not need DEV_MODE=false in the home's settings, which would
	// then send for real once the user switches to Gmail.
	g := &gate.Gate{Vault: vault, Limiter: limiter, Audit: auditLog, DevMode: cfg.DevMode && !useSandbox, Logger: logger}
	deps := &mcpserver.EmailDeps{Gate: g, Audit: auditLog, Logger: logger, Elicit: cfg.ApprovalElicit,
		Downloads: attach.Downloads{Dir: attach.DownloadDir(cfg.Home)}, OrganizeLimiter: organizeLimiter,
		Attachments: attach.Folder{Dir: cfg.AttachmentsDir}, Drafts: myDrafts}
	later, err := newLater(ctx, cfg, db, g, logger) // later.go: send_at
	if err != nil {
		return nil, err
	}
	// The one folder attachments may come from exists, private, from the
	// first start; a failure only leaves attachments refused (their error
	// names the folder).
	if err := os.MkdirAll(cfg.AttachmentsDir, 0o700); err != nil {
		logger.Warn("creating the attachment folder", "dir", cfg.AttachmentsDir, "err", err)
	}
	if gopts.TokenSource != nil {
		client, err := gmail.New(ctx, gopts)
		if err != nil {
			return nil, err
		}
		a.Gmail, deps.Gmail = client, mcpserver.GmailOf(client)
		if workEndpoint != "" {
			wopts := gopts
			wopts.Endpoint = workEndpoint
			work, err := gmail.New(ctx, wopts)
			if err != nil {
				return nil, err
			}
			deps.Gmail = mcpserver.GmailAccounts(map[string]mcpserver.Mailbox{account.Default: client, sandbox.WorkAccount: work})
			deps.Accounts = func() []string { return []string{account.Default, sandbox.WorkAccount} }
		}
		settleAtStart(ctx, g, deps.Gmail, logger, a)
		runLater(ctx, later, deps, a)
		return deps, nil
	}
	// A bad endpoint is a configuration error, refused at start like any
	// other; missing or unusable OAuth files are not: the server starts,
	// and the email tools say how to connect Gmail (gmail.Connector).
	if _, err := gmail.New(ctx, gmail.Options{Endpoint: gopts.Endpoint, TokenSource: oauth2.StaticTokenSource(&oauth2.Token{})}); err != nil {
		return nil, &config.Error{Var: "GMAIL_API_ENDPOINT", Msg: err.Error()}
	}
	conn := gmail.NewAccounts(ctx, gopts, cfg.Home)
	deps.Accounts = conn.Names
	a.gmail = "connected"
	if names := conn.Names(); len(names) > 1 {
		a.gmail = "connected; accounts " + strings.Join(names, ", ")
	}
	if _, err := conn.Connector().Get(ctx); err != nil {
		a.gmail = "not connected yet: run mailgate auth (the email tools say so until it has saved " + cfg.TokenFile + "; no restart needed)"
		logger.Debug("Gmail is not connected", "reason", errors.Unwrap(err))
	}
	a.Gmail = conn.Connector().Client()
	deps.Gmail = mcpserver.GmailConnector(conn)
	settleAtStart(ctx, g, deps.Gmail, logger, a)
	runLater(ctx, later, deps, a)
	return deps, nil
}

// settleAtStart decides, in the background, the sends an earlier process
// left without a known outcome (gate.Settle: the audit log, then Sent by
// Message-ID). Close waits for it.
func settleAtStart(ctx context.Context, g *gate.Gate, gm mcpserver.GmailGetter, logger *slog.Logger, a *app) {
	g.Sent = mcpserver.SentLookup(gm)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := g.Settle(ctx, "")
		for _, t := range r.Texts {
			logger.Info("settled an interrupted send: " + t)
		}
		if err != nil {
			logger.Warn("settling interrupted sends (they are tried again on the next start, the next identical call, and by mailgate approvals)", "err", err, "still_unknown", r.Open)
		}
	}()
	a.closers = append(a.closers, func() error { <-done; return nil })
}

// sandboxDir is where a sandbox server keeps its mailbox: in the home, next
// to the vault whose Done/ lists what it sent.
func sandboxDir(cfg *config.Config) string { return filepath.Join(cfg.Home, "sandbox") }

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// joinHTTPAddr turns "--http ADDR" into "--http=ADDR": the flag package
// ends the flags at the first word that is not one, so in "serve --http
// 127.0.0.1:8765 --tools agentmail" every flag after the address would
// otherwise be an argument.
func joinHTTPAddr(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--http" || a == "-http") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// optionalValue is a flag that may stand alone (--http) or carry a value
// (--http=ADDR).
type optionalValue struct {
	set   bool
	value string
}

func (o *optionalValue) String() string { return o.value }
func (o *optionalValue) Set(v string) error {
	o.set = true
	if v != "true" {
		o.value = v
	}
	return nil
}
func (o *optionalValue) IsBoolFlag() bool { return true }

// restoreHistory runs when the store is new (store.DB.Fresh). Beside a
// vault whose Done/ holds emails, that means the store that kept their
// history is gone: the server still starts (the vault and the audit log
// are intact, and refusing would leave the human no way forward but to
// recreate it by hand), but says so loudly, here at WARN and in the
// readiness answer and `mailgate approvals`. Either way the send window is
// rebuilt from the audit log, so a lost store never grants a fresh quota.
func restoreHistory(ctx context.Context, cfg *config.Config, logger *slog.Logger, db *store.DB, limiter *ratelimit.Limiter) (string, error) {
	restored, err := gate.RestoreSendHistory(ctx, cfg.AuditDir, limiter, time.Now())
	if err != nil {
		return "", fmt.Errorf("rebuilding the send-limit history of the new store %s from the audit log %s: %w", db.Where, cfg.AuditDir, err)
	}
	done := countDone(cfg.VaultPath)
	if done == 0 {
		if restored > 0 {
			logger.Warn("new store: send-limit history rebuilt from the audit log", "store", db.Where, "sends_last_hour", restored)
		}
		return "", nil
	}
	notice := storeLostText(db.Where, cfg.VaultPath, done) +
		fmt.Sprintf(" The send-limit history was rebuilt from the audit log (%d send(s) in the last hour).", restored)
	logger.Warn(notice, "store", db.Where, "done_files", done, "sends_last_hour", restored)
	// The readiness answer needs no token: it names no path.
	return fmt.Sprintf("new store beside a vault with %d email(s) in Done/: the old store's approval ledger and agent mail are gone; "+
		"send-limit history rebuilt from the audit log (%d send(s) in the last hour); see the server log", done, restored), nil
}

// storeLostText says that the store is newer than the vault's history.
func storeLostText(where, vault string, done int) string {
	return fmt.Sprintf("The store %s is new, but the vault %s holds %d email(s) in Done/: the store that kept their history is gone "+
		"(deleted, moved or replaced). The approval ledger and the agents' mail start empty. "+
		"If the old store still exists, stop every mailgate server and put it back.", where, vault, done)
}

// countDone counts the files in the vault's Done/ (0 when it has none).
func countDone(vault string) int {
	es, err := os.ReadDir(filepath.Join(vault, approval.DirDone))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}
