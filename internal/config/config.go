// Package config loads mailgate's configuration contract (DESIGN.md,
// "Configuration contract") from flags, the environment and a .env file, in
// that order of precedence, and resolves every path to an absolute one.
//
// Every command and every agent's server on a machine must find the same
// home without being told, or a request written by one server is invisible
// to the terminal and two agents' messages land in two stores. So the home
// is never the working directory: it is MAILGATE_HOME when given, else one
// fixed per-user folder, ~/.mailgate (DefaultHomeName). One folder, not the
// OS's config and data folders, because it holds what a person opens and
// backs up as one: the vault (an Obsidian vault), the token, the audit log,
// the store and the settings file ($MAILGATE_HOME/.env, which the terminal
// and the servers both read, so they agree on DEV_MODE and the rest).
//
// Claude Desktop starts servers with an undefined working directory and a thin
// environment, so nothing here may depend on the working directory after Load
// returns: every path in Config is absolute, and a bad value stops the program
// with a one-line message naming the variable and what to do.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/store"
)

// Toolset names accepted in MAILGATE_TOOLS.
const (
	ToolsEmail     = "email"
	ToolsAgentMail = "agentmail"
	ToolsChannels  = "channels"
	ToolsMailbox   = "mailbox"
)

// Config is the resolved configuration. Paths are absolute.
type Config struct {
	Home            string        // MAILGATE_HOME
	HomeIsDefault   bool          // Home is the per-user default, ~/.mailgate (given or not)
	EnvFile         string        // the .env file read, "" if none
	SettingsFile    string        // the home's settings file, $MAILGATE_HOME/.env (read when it exists)
	VaultPath       string        // VAULT_PATH
	CredentialsFile string        // GMAIL_CREDENTIALS_FILE
	TokenFile       string        // GMAIL_TOKEN_FILE
	GmailEndpoint   string        // GMAIL_API_ENDPOINT ("" = Google's)
	AuditDir        string        // AUDIT_LOG_DIR
	DB              string        // MAILGATE_DB (absolute SQLite path, or a postgres:// URL)
	DevMode         bool          // DEV_MODE
	ApprovalMode    string        // APPROVAL_MODE: content | recipient
	ApprovalTTL     time.Duration // APPROVAL_TTL
	SendLimit       int           // SEND_LIMIT_PER_HOUR
	Tools           []string      // MAILGATE_TOOLS
	HTTPAddr        string        // AGENT_MAIL_HTTP_ADDR
	HTTPPath        string        // AGENT_MAIL_PATH
	BearerToken     string        // AGENT_MAIL_BEARER_TOKEN (never logged)
	HTTPRateLimit   int           // AGENT_MAIL_HTTP_RATE_LIMIT: requests per second per client; 0 = off
	Mirror          string        // AGENT_MAIL_MIRROR: off | gmail
	NameMode        string        // AGENT_NAME_ENFORCEMENT_MODE: coerce | strict | always_auto
	BindSenders     bool          // AGENT_MAIL_BIND_SENDERS
	ToolsProfile    string        // TOOLS_FILTER_PROFILE: full | minimal
}

// HasTools reports whether the toolset name is enabled.
func (c *Config) HasTools(name string) bool {
	for _, t := range c.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// Var documents one configuration variable; Vars is the contract in order.
// .env.example and the README table are checked against it by tests.
type Var struct {
	Name, Flag, Default, Meaning string
}

// Vars lists every variable of the configuration contract.
var Vars = []Var{
	{"MAILGATE_HOME", "home", "~/.mailgate", "the one folder every command and every agent's server uses (never the working directory): vault, auth, audit log, store and the settings file .env"},
	{"VAULT_PATH", "vault", "$MAILGATE_HOME/vault", "approval vault: Pending_Approval/, Approved/, Rejected/, Done/, Logs/ (created if missing)"},
	{"GMAIL_CREDENTIALS_FILE", "credentials", "$MAILGATE_HOME/auth/credentials.json", "Google OAuth client (installed-app JSON; its token_uri is honoured)"},
	{"GMAIL_TOKEN_FILE", "token", "$MAILGATE_HOME/auth/token.json", "OAuth token, mode 0600, rewritten atomically after a refresh"},
	{"GMAIL_API_ENDPOINT", "gmail-endpoint", "Google's", "base URL of the Gmail REST API (the sandbox and tests point it at a local server)"},
	{"AUDIT_LOG_DIR", "audit-dir", "$MAILGATE_HOME/audit", "append-only JSONL audit log, one file per day"},
	{"MAILGATE_DB", "db", "$MAILGATE_HOME/state.db", "state store: a SQLite file, or a postgres:// URL for servers on several hosts"},
	{"DEV_MODE", "dev-mode", "true", "false is required for anything to leave the machine"},
	{"APPROVAL_MODE", "approval-mode", "content", "content: the approval must match the exact content; recipient: match on to / thread_id alone"},
	{"APPROVAL_TTL", "approval-ttl", "24h", "expiry written into new requests"},
	{"SEND_LIMIT_PER_HOUR", "send-limit", "10", "rolling one-hour limit over sends and replies, shared by every process on the store"},
	{"MAILGATE_TOOLS", "tools", "email,agentmail", "tool sets to expose: email, agentmail, channels, mailbox"},
	{"AGENT_MAIL_HTTP_ADDR", "http-addr", "127.0.0.1:8765", "address for serve --http"},
	{"AGENT_MAIL_PATH", "http-path", "/mcp/", "HTTP endpoint path"},
	{"AGENT_MAIL_BEARER_TOKEN", "bearer-token", "", "required on every HTTP request when set; at least 32 characters (openssl rand -hex 32); needed to serve the email tools over HTTP, or to bind a non-loopback address"},
	{"AGENT_MAIL_HTTP_RATE_LIMIT", "http-rate-limit", "2000", "HTTP requests per second per client IP (bursts of twice that), answered 429 beyond; 0 turns it off. Requests without a valid token keep their own 10 per second"},
	{"AGENT_MAIL_MIRROR", "mirror", "off", "gmail: copy agent threads into the mailbox under a label"},
	{"AGENT_NAME_ENFORCEMENT_MODE", "name-mode", "coerce", "register_agent names: coerce (an invalid or taken name is replaced, and the answer says so), strict (refused), always_auto (always generated)"},
	{"AGENT_MAIL_BIND_SENDERS", "bind-senders", "false", "true: a session may send only as the agents it registered (or whose registration_token it gives as sender_token); false trusts sender_name as the reference does"},
	{"TOOLS_FILTER_PROFILE", "tools-profile", "full", "agentmail tools to list: full (all), or minimal (health_check, ensure_project, register_agent, send_message, fetch_inbox, acknowledge_message)"},
}

// ErrBadFlag is inside the error of a command line whose flags do not
// parse (an unknown flag, a missing value): a usage error, which commands
// report with exit status 2 rather than as a configuration problem.
var ErrBadFlag = errors.New("bad command line")

// Error is a configuration problem, phrased for the person fixing it.
type Error struct {
	Var string // the variable at fault, "" if none
	Msg string
	Err error // the underlying error, if any (e.g. flag.ErrHelp)
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Var == "" {
		return "configuration: " + e.Msg
	}
	return "configuration: " + e.Var + ": " + e.Msg
}

// Load reads the configuration. args are the flags of the subcommand (the
// common flags below are registered on fs, which the caller may have
// extended with its own); getenv reads the process environment; cwd is the
// working directory, used only for a relative MAILGATE_HOME or --env-file
// (never for the default home, ~/.mailgate).
//
// Precedence: flags > environment > .env file > defaults. The .env file is
// the home's settings file, $MAILGATE_HOME/.env (or --env-file); a missing
// settings file is not an error.
func Load(fs *flag.FlagSet, args []string, getenv func(string) string, cwd string) (*Config, error) {
	flags := map[string]*string{}
	for _, v := range Vars {
		flags[v.Name] = fs.String(v.Flag, "", v.Meaning+" ("+v.Name+")")
	}
	envFile := fs.String("env-file", "", "read variables from this .env file (default $MAILGATE_HOME/.env)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		werr := err
		if !errors.Is(err, flag.ErrHelp) {
			werr = fmt.Errorf("%w: %w", ErrBadFlag, err)
		}
		return nil, &Error{Msg: err.Error(), Err: werr}
	}
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })

	// lookup without the .env file, to find the home and the .env file itself.
	lookup := func(name string) string {
		for _, v := range Vars {
			if v.Name == name && setFlags[v.Flag] {
				return *flags[name]
			}
		}
		return getenv(name)
	}
	home, err := expandHome("MAILGATE_HOME", lookup("MAILGATE_HOME"), getenv)
	if err != nil {
		return nil, err
	}
	dotenv := map[string]string{}
	path := *envFile
	explicit := path != ""
	if explicit {
		path = absFrom(cwd, path)
		m, err := godotenv.Read(path)
		if err != nil {
			return nil, &Error{Var: "--env-file", Msg: fmt.Sprintf("reading %s: %v", path, err)}
		}
		dotenv = m
		// A home given only in an --env-file still counts, so such a file
		// can be self-contained.
		if home == "" && m["MAILGATE_HOME"] != "" {
			h, err := expandHome("MAILGATE_HOME", m["MAILGATE_HOME"], getenv)
			if err != nil {
				return nil, err
			}
			home = absFrom(filepath.Dir(path), h)
		}
	}
	if home == "" {
		if home = DefaultHome(getenv); home == "" {
			return nil, &Error{Var: "MAILGATE_HOME", Msg: "not set, and HOME (which locates the default home ~/" + DefaultHomeName + ") is not set either: set MAILGATE_HOME to an absolute path"}
		}
	}
	home = absFrom(cwd, home)
	isDefault := home == DefaultHome(getenv)
	if filepath.Dir(home) == home {
		return nil, &Error{Var: "MAILGATE_HOME", Msg: fmt.Sprintf("%q is the root folder, not a home: unset it to use ~/%s, or give a folder of its own", home, DefaultHomeName)}
	}
	settings := filepath.Join(home, ".env")
	if !explicit {
		path = settings
		m, err := godotenv.Read(path)
		switch {
		case err == nil:
			dotenv = m
		case errors.Is(err, os.ErrNotExist):
			path = ""
		default:
			return nil, &Error{Var: "--env-file", Msg: fmt.Sprintf("reading %s: %v", path, err)}
		}
		// The home's own settings file cannot move the home: the file
		// was found by the home. Only a line naming this home is allowed.
		if h := m["MAILGATE_HOME"]; h != "" {
			h, err := expandHome("MAILGATE_HOME", h, getenv)
			if err != nil {
				return nil, err
			}
			if absFrom(home, h) != home {
				return nil, &Error{Var: "MAILGATE_HOME", Msg: fmt.Sprintf("%s sets MAILGATE_HOME=%s, but a home's own settings file cannot point elsewhere: remove that line, or set MAILGATE_HOME in the environment", path, h)}
			}
		}
	}
	get := func(name string) string {
		if v := lookup(name); v != "" {
			return v
		}
		return dotenv[name]
	}

	c := &Config{Home: home, HomeIsDefault: isDefault, EnvFile: path, SettingsFile: settings}
	var pathErr error // the first path that could not be resolved
	pathVar := func(name, def string) string {
		v := get(name)
		if v == "" {
			return filepath.Join(home, def)
		}
		v, err := expandHome(name, v, getenv)
		if err != nil && pathErr == nil {
			pathErr = err
		}
		// Relative paths are taken from MAILGATE_HOME, never from the
		// working directory, which is undefined under Claude Desktop.
		return absFrom(home, v)
	}
	c.VaultPath = pathVar("VAULT_PATH", "vault")
	c.CredentialsFile = pathVar("GMAIL_CREDENTIALS_FILE", filepath.Join("auth", "credentials.json"))
	c.TokenFile = pathVar("GMAIL_TOKEN_FILE", filepath.Join("auth", "token.json"))
	c.AuditDir = pathVar("AUDIT_LOG_DIR", "audit")
	switch v := get("MAILGATE_DB"); {
	case isDBURL(v):
		c.DB = v // a PostgreSQL URL or keyword/value string, checked below
	case v == "" && !exists(filepath.Join(home, "state.db")) && exists(filepath.Join(home, legacyDB)):
		// Homes made before the store moved to state.db keep theirs.
		c.DB = filepath.Join(home, legacyDB)
	default:
		c.DB = pathVar("MAILGATE_DB", "state.db")
	}
	if pathErr != nil {
		return nil, pathErr
	}
	c.GmailEndpoint = get("GMAIL_API_ENDPOINT")
	c.HTTPAddr = orDefault(get("AGENT_MAIL_HTTP_ADDR"), "127.0.0.1:8765")
	c.HTTPPath = orDefault(get("AGENT_MAIL_PATH"), "/mcp/")
	c.BearerToken = get("AGENT_MAIL_BEARER_TOKEN")

	if c.DevMode, err = parseBool("DEV_MODE", orDefault(get("DEV_MODE"), "true")); err != nil {
		return nil, err
	}
	switch c.ApprovalMode = strings.ToLower(orDefault(get("APPROVAL_MODE"), "content")); c.ApprovalMode {
	case "content", "recipient":
	default:
		return nil, &Error{Var: "APPROVAL_MODE", Msg: fmt.Sprintf("%q is not one of content, recipient", c.ApprovalMode)}
	}
	ttl := orDefault(get("APPROVAL_TTL"), "24h")
	if c.ApprovalTTL, err = time.ParseDuration(ttl); err != nil || c.ApprovalTTL <= 0 {
		return nil, &Error{Var: "APPROVAL_TTL", Msg: fmt.Sprintf("%q is not a positive duration such as 24h or 90m", ttl)}
	}
	rl := orDefault(get("AGENT_MAIL_HTTP_RATE_LIMIT"), "2000")
	if c.HTTPRateLimit, err = strconv.Atoi(rl); err != nil || c.HTTPRateLimit < 0 || c.HTTPRateLimit > 1_000_000 {
		return nil, &Error{Var: "AGENT_MAIL_HTTP_RATE_LIMIT", Msg: fmt.Sprintf("%q is not a whole number from 0 (no limit) to 1000000 requests per second", rl)}
	}
	limit := orDefault(get("SEND_LIMIT_PER_HOUR"), "10")
	if c.SendLimit, err = strconv.Atoi(limit); err != nil || c.SendLimit < 1 || c.SendLimit > 10000 {
		return nil, &Error{Var: "SEND_LIMIT_PER_HOUR", Msg: fmt.Sprintf("%q is not a whole number from 1 to 10000 (to send nothing, keep DEV_MODE=true)", limit)}
	}
	if c.Tools, err = parseTools(orDefault(get("MAILGATE_TOOLS"), "email,agentmail")); err != nil {
		return nil, err
	}
	switch c.Mirror = strings.ToLower(orDefault(get("AGENT_MAIL_MIRROR"), "off")); c.Mirror {
	case "off", "gmail":
	default:
		return nil, &Error{Var: "AGENT_MAIL_MIRROR", Msg: fmt.Sprintf("%q is not one of off, gmail", c.Mirror)}
	}
	switch c.NameMode = strings.ToLower(orDefault(get("AGENT_NAME_ENFORCEMENT_MODE"), "coerce")); c.NameMode {
	case "coerce", "strict", "always_auto":
	default:
		return nil, &Error{Var: "AGENT_NAME_ENFORCEMENT_MODE", Msg: fmt.Sprintf("%q is not one of coerce, strict, always_auto", c.NameMode)}
	}
	if c.BindSenders, err = parseBool("AGENT_MAIL_BIND_SENDERS", orDefault(get("AGENT_MAIL_BIND_SENDERS"), "false")); err != nil {
		return nil, err
	}
	switch c.ToolsProfile = strings.ToLower(orDefault(get("TOOLS_FILTER_PROFILE"), "full")); c.ToolsProfile {
	case "full", "minimal":
	default:
		return nil, &Error{Var: "TOOLS_FILTER_PROFILE", Msg: fmt.Sprintf("%q is not one of full, minimal", c.ToolsProfile)}
	}
	if !strings.HasPrefix(c.HTTPPath, "/") {
		return nil, &Error{Var: "AGENT_MAIL_PATH", Msg: fmt.Sprintf("%q must start with /", c.HTTPPath)}
	}
	if err := checkDB(c.DB); err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultHomeName is the default home's name in the user's home folder.
const DefaultHomeName = ".mailgate"

// legacyDB is where homes made before state.db kept the store.
var legacyDB = filepath.Join(".mailgate", "state.db")

// DefaultHome is the home used when MAILGATE_HOME is not given:
// ~/.mailgate, or "" when the user's home folder is unknown.
func DefaultHome(getenv func(string) string) string {
	if h := userHome(getenv); h != "" {
		return filepath.Join(filepath.Clean(h), DefaultHomeName)
	}
	return ""
}

// userHome is the user's home folder: HOME, or on Windows USERPROFILE.
func userHome(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	if runtime.GOOS == "windows" {
		return getenv("USERPROFILE")
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func parseTools(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		switch t {
		case ToolsEmail, ToolsAgentMail, ToolsChannels, ToolsMailbox:
		default:
			return nil, &Error{Var: "MAILGATE_TOOLS", Msg: fmt.Sprintf("unknown tool set %q (known: email, agentmail, channels, mailbox)", t)}
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, &Error{Var: "MAILGATE_TOOLS", Msg: "no tool set selected"}
	}
	if seen[ToolsChannels] && seen[ToolsAgentMail] {
		return nil, &Error{Var: "MAILGATE_TOOLS", Msg: "channels and agentmail both define a tool named send_message; select one of them per server"}
	}
	return out, nil
}

func parseBool(name, s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, &Error{Var: name, Msg: fmt.Sprintf("%q is not true or false", s)}
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// expandHome expands a leading "~/" (or a lone "~") with $HOME: client
// config files are not read by a shell, so "~/mailgate" arrives as written.
// Without HOME it is an error naming the variable, not a folder called "~".
func expandHome(name, p string, getenv func(string) string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	h := getenv("HOME")
	if h == "" {
		return "", &Error{Var: name, Msg: fmt.Sprintf("%q starts with ~ but HOME is not set in this environment; give an absolute path", p)}
	}
	return filepath.Join(h, strings.TrimPrefix(p, "~")), nil
}

// isDBURL reports whether MAILGATE_DB names a database server rather than a
// SQLite file: a PostgreSQL URL or libpq keyword/value string
// ("host=… dbname=… password=…", see store.IsKeywordValue). Any scheme-like
// "postgres…:" prefix counts too, so a mistyped URL is reported as a bad URL
// rather than taken for a file name (which would also print its password).
func isDBURL(v string) bool {
	return strings.HasPrefix(v, "postgres:") || strings.HasPrefix(v, "postgresql:") || store.IsKeywordValue(v)
}

// checkDB parses a PostgreSQL MAILGATE_DB now, so a bad one is one clear
// line at start, before any connection is tried. The message never quotes
// the string (store.CheckPostgres), as it may hold a password.
func checkDB(v string) error {
	if !isDBURL(v) {
		return nil
	}
	if store.IsPostgres(v) {
		if err := store.CheckPostgres(v); err != nil {
			return &Error{Var: "MAILGATE_DB", Msg: err.Error()}
		}
		return nil
	}
	// "postgres:…" without the slashes: pgx would read it as keyword/value.
	return &Error{Var: "MAILGATE_DB", Msg: "not a valid PostgreSQL URL: write postgres://user:password@host:5432/dbname (or a keyword/value string such as host=… dbname=…)"}
}
