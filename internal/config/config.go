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
	"slices"
	"strings"
	"time"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/store/dsn"
)

// Toolset names accepted in MAILGATE_TOOLS.
const (
	ToolsEmail     = "email"
	ToolsAgentMail = "agentmail"
	ToolsChannels  = "channels"
	ToolsMailbox   = "mailbox"
)

// Config is the resolved configuration. Paths are absolute. A field tagged
// `setting:"NAME"` holds the setting NAME of Vars, parsed by its kind.
type Config struct {
	Home            string        `setting:"MAILGATE_HOME"`
	HomeIsDefault   bool          // Home is the per-user default, ~/.mailgate (given or not)
	EnvFile         string        // the .env file read, "" if none
	SettingsFile    string        // the home's settings file, $MAILGATE_HOME/.env (read when it exists)
	VaultPath       string        `setting:"VAULT_PATH"`
	CredentialsFile string        `setting:"GMAIL_CREDENTIALS_FILE"`
	TokenFile       string        `setting:"GMAIL_TOKEN_FILE"`
	GmailEndpoint   string        `setting:"GMAIL_API_ENDPOINT"` // "" = Google's
	AuditDir        string        `setting:"AUDIT_LOG_DIR"`
	DB              string        `setting:"MAILGATE_DB"` // absolute SQLite path, or a PostgreSQL URL
	DevMode         bool          `setting:"DEV_MODE"`
	ApprovalMode    string        `setting:"APPROVAL_MODE"`
	ApprovalElicit  bool          `setting:"APPROVAL_ELICIT"`
	ApprovalTTL     time.Duration `setting:"APPROVAL_TTL"`
	SendLaterGrace  time.Duration `setting:"SEND_LATER_GRACE"`
	SendLimit       int           `setting:"SEND_LIMIT_PER_HOUR"`
	OrganizeLimit   int           `setting:"ORGANIZE_LIMIT"`
	AttachmentsDir  string        `setting:"ATTACHMENTS_DIR"`
	Tools           []string      `setting:"MAILGATE_TOOLS"`
	HTTPAddr        string        `setting:"AGENT_MAIL_HTTP_ADDR"`
	HTTPPath        string        `setting:"AGENT_MAIL_PATH"`
	BearerToken     string        `setting:"AGENT_MAIL_BEARER_TOKEN"`    // never logged
	HTTPAuth        string        `setting:"AGENT_MAIL_HTTP_AUTH"`       // token | none
	HTTPRateLimit   int           `setting:"AGENT_MAIL_HTTP_RATE_LIMIT"` // requests per second per client; 0 = off
	JWTKeyFile      string        `setting:"AGENT_MAIL_JWT_KEY_FILE"`
	JWKSURL         string        `setting:"AGENT_MAIL_JWKS_URL"`
	JWTIssuer       string        `setting:"AGENT_MAIL_JWT_ISSUER"`
	JWTAudience     string        `setting:"AGENT_MAIL_JWT_AUDIENCE"`
	Metrics         string        `setting:"AGENT_MAIL_METRICS"` // auth | open | off
	MetricsAddr     string        `setting:"AGENT_MAIL_METRICS_ADDR"`
	Mirror          string        `setting:"AGENT_MAIL_MIRROR"`
	NameMode        string        `setting:"AGENT_NAME_ENFORCEMENT_MODE"`
	BindSenders     bool          `setting:"AGENT_MAIL_BIND_SENDERS"`
	ToolsProfile    string        `setting:"TOOLS_FILTER_PROFILE"`
	AckDeadline     string        `setting:"AGENT_MAIL_ACK_DEADLINE"`
	AckReserve      bool          `setting:"AGENT_MAIL_ACK_RESERVE"`
}

// HasTools reports whether the toolset name is enabled.
func (c *Config) HasTools(name string) bool {
	return slices.Contains(c.Tools, name)
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
		if v.Flag != "" {
			flags[v.Name] = fs.String(v.Flag, "", v.Usage()+" ("+v.Name+")")
		}
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
			if v.Name == name && v.Flag != "" && setFlags[v.Flag] {
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
	for i := range Vars {
		if v := &Vars[i]; v.Loaded() && v.Kind != KindHome {
			if err := v.parse(c, get(v.Name), getenv); err != nil {
				return nil, err
			}
		}
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

// parseTools reads MAILGATE_TOOLS: known tool sets, comma-separated,
// duplicates ignored, at least one, and not both of the two that define
// send_message.
func parseTools(v *Var, s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		if !slices.Contains(v.Choices, t) {
			return nil, &Error{Var: v.Name, Msg: fmt.Sprintf("unknown tool set %q (known: %s)", t, strings.Join(v.Choices, ", "))}
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, &Error{Var: v.Name, Msg: "no tool set selected"}
	}
	if seen[ToolsChannels] && seen[ToolsAgentMail] {
		return nil, &Error{Var: v.Name, Msg: "channels and agentmail both define a tool named send_message; select one of them per server"}
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
// ("host=… dbname=… password=…", see dsn.IsKeywordValue). Any scheme-like
// "postgres…:" prefix counts too, so a mistyped URL is reported as a bad URL
// rather than taken for a file name (which would also print its password).
func isDBURL(v string) bool {
	return strings.HasPrefix(v, "postgres:") || strings.HasPrefix(v, "postgresql:") || dsn.IsKeywordValue(v)
}

// checkDB parses a PostgreSQL MAILGATE_DB now, so a bad one is one clear
// line at start, before any connection is tried. The message never quotes
// the string (dsn.Check), as it may hold a password.
func checkDB(v string) error {
	if !isDBURL(v) {
		return nil
	}
	if dsn.IsPostgres(v) {
		if err := dsn.Check(v); err != nil {
			return &Error{Var: "MAILGATE_DB", Msg: err.Error()}
		}
		return nil
	}
	// "postgres:…" without the slashes: pgx would read it as keyword/value.
	return &Error{Var: "MAILGATE_DB", Msg: "not a valid PostgreSQL URL: write postgres://user:password@host:5432/dbname (or a keyword/value string such as host=… dbname=…)"}
}
