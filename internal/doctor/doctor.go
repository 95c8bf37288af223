// Package doctor checks a mailgate installation the way a person debugging
// it would, and says for each problem the one thing to do about it.
//
// It exists because the failures users of Gmail MCP servers hit most are
// set-up failures that only show later, inside Claude Desktop, as a server
// that does not start or a tool that fails: a missing or unreadable file, a
// token without a refresh token or revoked after 7 days in "Testing",
// unticked scopes, a folder the server cannot write. Each check here
// reproduces what `mailgate serve` would do with the same configuration
// (open the store and apply its migrations, refresh the token at the
// credentials' token_uri, call Gmail), so a clean report means a clean
// start.
//
// Checks never print secrets. The only things they may change are what
// serve would change on start (the store file and its migrations) and, if
// Google rotates the refresh token during the check, the token file (so the
// new one is not lost).
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
)

// Status is a check's verdict.
type Status int

const (
	OK   Status = iota
	Warn        // works, but risky or likely to break later
	Fail        // mailgate will not work until this is fixed
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	}
	return "FAIL"
}

// Check is one line of the report.
type Check struct {
	Name   string
	Status Status
	Detail string
	Fix    string // one action; empty when Status is OK
}

// Options configure Run.
type Options struct {
	// Scopes are the OAuth scopes the configuration needs (full URLs).
	Scopes []string
	// ToolsLeftOut names the tools that granted scopes do not permit
	// (mcpserver.EmailToolsLeftOut when the email tools are served); nil
	// names none.
	ToolsLeftOut func(granted []string) []string
	// Migrate applies the schema migrations serve would apply; nil skips it.
	Migrate func(ctx context.Context, db *store.DB) error
	// HTTPClient is used for the token endpoint and Gmail; nil = a client
	// with a 20 s timeout.
	HTTPClient *http.Client
	// GOOS decides whether Unix permission bits mean anything; default
	// runtime.GOOS.
	GOOS string
	// ClientConfigs are MCP clients' configuration files to look for
	// filesystem servers and project folders that hold the vault.
	ClientConfigs []ClientConfig
	// UserHome expands "~" in those files; default os.UserHomeDir.
	UserHome string
	// BadProjects lists the store's agent-mail projects whose folder no
	// project may be, each with the reason; nil skips the check.
	BadProjects func(ctx context.Context, db *store.DB) ([]string, error)
	// Live adds the live checks (live.go): read calls and one deleted
	// draft on each signed-in account.
	Live bool
}

// Run runs every check that applies to cfg, in a fixed order.
func Run(ctx context.Context, cfg *config.Config, o Options) []Check {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 20 * time.Second}
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	r := &run{ctx: ctx, cfg: cfg, o: o}
	defer func() {
		if r.db != nil {
			r.db.Close()
		}
	}()
	r.add(configCheck(cfg))
	r.add(devModeCheck(cfg))
	r.add(r.vault())
	if cfg.HasTools(config.ToolsEmail) {
		r.add(r.vaultExposure())
	}
	r.add(r.auditDir())
	r.add(r.store())
	if r.o.BadProjects != nil && (cfg.HasTools(config.ToolsAgentMail) || cfg.HasTools(config.ToolsChannels) || cfg.HasTools(config.ToolsMailbox)) {
		r.add(r.agentProjects())
	}
	r.add(httpAuth(cfg))
	if !cfg.HasTools(config.ToolsEmail) && cfg.Mirror != "gmail" {
		r.add(Check{Name: "gmail", Detail: "not used (MAILGATE_TOOLS has no email and AGENT_MAIL_MIRROR is off)"})
		return r.checks
	}
	r.google()
	accounts := r.accounts() // google.go: every account besides the default
	if o.Live {
		// Every account an agent can name: each is its own mailbox, and
		// its own Gmail answers.
		r.live()
		for _, a := range accounts {
			i := len(a.checks)
			a.live()
			r.addFrom(a, i)
		}
	}
	return r.checks
}

type run struct {
	ctx    context.Context
	cfg    *config.Config
	o      Options
	checks []Check

	// The store, opened once for every check that reads it (openStore).
	db       *store.DB
	dbErr    error
	dbOpened bool
}

func (r *run) add(c Check) { r.checks = append(r.checks, c) }

// openStore opens the store (cfg.DB) on the first call and returns that
// opening to every later one: an opening checks the whole file (its schema
// and SQLite's quick_check), and the vault, store and agent-project checks
// each opened it. Run closes it.
func (r *run) openStore() (*store.DB, error) {
	if !r.dbOpened {
		r.dbOpened = true
		r.db, r.dbErr = store.Open(r.ctx, r.cfg.DB)
	}
	return r.db, r.dbErr
}

// unix reports whether permission bits are meaningful here.
func (r *run) unix() bool { return r.o.GOOS != "windows" }

func configCheck(cfg *config.Config) Check {
	env := "no .env file"
	if cfg.EnvFile != "" {
		env = "read " + cfg.EnvFile
	}
	return Check{Name: "config", Detail: fmt.Sprintf("home %s; %s; tools %s", cfg.Home, env, strings.Join(cfg.Tools, ","))}
}

// ConfigError is the report line for a configuration that does not load.
func ConfigError(err error) Check {
	fix := "correct the value in the environment, the flags or the .env file (every setting and its default: mailgate config -h)"
	var ce *config.Error
	if errors.As(err, &ce) && ce.Var != "" {
		fix = "correct " + ce.Var + " in the environment, the flags or the .env file (every setting and its default: mailgate config -h)"
	}
	return Check{Name: "config", Status: Fail, Detail: err.Error(), Fix: fix}
}

func devModeCheck(cfg *config.Config) Check {
	if !cfg.HasTools(config.ToolsEmail) {
		return Check{Name: "dev mode", Detail: "no email tools, nothing to send"}
	}
	// This is the configuration doctor loaded, not necessarily a running
	// server's (a client may set DEV_MODE in its own configuration): the
	// line says so, and where to see the servers' own.
	if cfg.DevMode {
		return Check{Name: "dev mode", Detail: "DEV_MODE=true: a server started with these settings runs every gate and sends nothing " +
			"(mailgate config set DEV_MODE false to send approved emails; mailgate approvals shows what running servers do)"}
	}
	return Check{Name: "dev mode", Detail: "DEV_MODE=false: a server started with these settings really sends approved emails (mailgate approvals shows what running servers do)"}
}

// Counts returns the number of failures and warnings.
func Counts(checks []Check) (fails, warns int) {
	for _, c := range checks {
		switch c.Status {
		case Fail:
			fails++
		case Warn:
			warns++
		}
	}
	return fails, warns
}

// Write prints the report: one line per check, a "fix:" line under each
// problem, and a closing summary.
func Write(w io.Writer, title string, checks []Check) {
	fmt.Fprintf(w, "mailgate doctor: %s\n", title)
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	for _, c := range checks {
		fmt.Fprintf(w, "  %-4s  %-*s  %s\n", c.Status, width, c.Name, oneLine(c.Detail))
		if c.Status != OK && c.Fix != "" {
			fmt.Fprintf(w, "  %-4s  %-*s  fix: %s\n", "", width, "", oneLine(c.Fix))
		}
	}
	fails, warns := Counts(checks)
	switch {
	case fails == 0 && warns == 0:
		fmt.Fprintln(w, "All good.")
	case fails == 0:
		fmt.Fprintf(w, "No problems; %s worth a look.\n", plural(warns, "warning"))
	default:
		fmt.Fprintf(w, "%s, %s: fix the FAIL lines, then run mailgate doctor again.\n", plural(fails, "problem"), plural(warns, "warning"))
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
