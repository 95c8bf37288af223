package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Kind is how a setting's text becomes a value; it decides the parser, the
// error message for a bad value and how `mailgate config get` prints it.
type Kind int

const (
	KindHome     Kind = iota // MAILGATE_HOME: resolved before the others (Load)
	KindPath                 // a file or folder; relative from MAILGATE_HOME, "~/" from HOME
	KindDB                   // a SQLite path (as KindPath) or a PostgreSQL URL or keyword/value string
	KindString               // taken as given
	KindBool                 // true/false, 1/0, yes/no, on/off
	KindInt                  // a whole number in [Min, Max]
	KindDuration             // a positive Go duration (24h, 90m)
	KindChoice               // one of Choices, case-insensitive
	KindToolSets             // a comma-separated list of Choices (parseTools)
	KindLogLevel             // debug, info, warn, error: read by serve and mailbox, not by Load
)

// Section groups the settings in .env.example and README's table.
type Section string

const (
	SectionHome    Section = "The home and its files"
	SectionEmail   Section = "Email and the approval gate"
	SectionServing Section = "Serving"
	SectionAgents  Section = "Agent mail"
)

// homePrefix starts a default that lies in the home ("$MAILGATE_HOME/vault").
const homePrefix = "$MAILGATE_HOME/"

// Var is one setting of the configuration contract (DESIGN.md). Vars is the
// one place each is written: Load parses by it, the configuration flags
// and `mailgate serve -h` list it, `mailgate config get` prints by it, and
// .env.example and README's table are rendered from it (EnvExample,
// READMETable; TestEnvExampleMatchesTable and
// TestREADMEConfigTableMatches fail when they differ, and -update
// rewrites them).
type Var struct {
	Name    string // the environment variable
	Flag    string // the configuration flag; "" when the setting has none of Load's
	Default string // the value when unset ("" = none); "$MAILGATE_HOME/x" is x in the home
	Shown   string // how an empty Default is documented ("Google's", "none"); "" when Default is the value
	Kind    Kind
	Section Section  // set by inSection (Vars)
	Meaning string   // one line; `backticks` mark literal text (README keeps them, the rest drops them)
	Choices []string // KindChoice, KindToolSets: the accepted values, lower case
	Min     int      // KindInt: the range, and what the error says after each bound
	Max     int
	MinNote string
	MaxNote string

	// check is a further rule on the parsed value, the reason when broken.
	check func(value string) string
}

// Vars lists every setting of the configuration contract, section by
// section (inSection), so that each section's settings stay together:
// .env.example and `mailgate serve -h` head each section once.
var Vars = slices.Concat(
	inSection(SectionHome, []Var{
		{Name: "MAILGATE_HOME", Flag: "home", Default: "~/" + DefaultHomeName, Kind: KindHome,
			Meaning: "the one folder every command and every agent's server uses, never the working directory: vault, auth, audit log, store, settings file `.env`; set it in the environment or an `--env-file`, not in the home's own settings file"},
		{Name: "VAULT_PATH", Flag: "vault", Default: homePrefix + "vault", Kind: KindPath,
			Meaning: "approval vault: `Pending_Approval/`, `Approved/`, `Rejected/`, `Done/`, `Logs/` (created if missing)"},
		{Name: "GMAIL_CREDENTIALS_FILE", Flag: "credentials", Default: homePrefix + "auth/credentials.json", Kind: KindPath,
			Meaning: "Google OAuth client (installed-app JSON; its `token_uri` is honoured)"},
		{Name: "GMAIL_TOKEN_FILE", Flag: "token", Default: homePrefix + "auth/token.json", Kind: KindPath,
			Meaning: "OAuth token, mode 0600, rewritten atomically after a refresh"},
		{Name: "AUDIT_LOG_DIR", Flag: "audit-dir", Default: homePrefix + "audit", Kind: KindPath,
			Meaning: "append-only JSONL audit log, one file per UTC day"},
		{Name: "MAILGATE_DB", Flag: "db", Default: homePrefix + "state.db", Kind: KindDB,
			Meaning: "state store: a SQLite file (created 0600, its folder 0700), or a `postgres://` URL or keyword/value string (`host=… dbname=…`) for servers on several hosts; a home that has `.mailgate/state.db` and no `state.db` keeps using it"},
	}),
	inSection(SectionEmail, []Var{
		{Name: "GMAIL_API_ENDPOINT", Flag: "gmail-endpoint", Shown: "Google's", Kind: KindString,
			Meaning: "base URL of the Gmail REST API (the sandbox and tests point it at a local server)"},
		{Name: "DEV_MODE", Flag: "dev-mode", Default: "true", Kind: KindBool,
			Meaning: "`false` is required for anything to leave the machine"},
		{Name: "APPROVAL_MODE", Flag: "approval-mode", Default: "content", Kind: KindChoice,
			Choices: []string{"content", "recipient"},
			Meaning: "`content`: the approval must match the exact content; `recipient`: match on `to` / `thread_id` alone"},
		{Name: "APPROVAL_TTL", Flag: "approval-ttl", Default: "24h", Kind: KindDuration,
			Meaning: "expiry written into new requests"},
		{Name: "SEND_LATER_GRACE", Flag: "send-later-grace", Default: "1h", Kind: KindDuration,
			Meaning: "a scheduled email (`send_at`) whose time passed while no server ran is still sent at the next start within this long after its time; later, it is moved to `Rejected/` with the reason"},
		{Name: "APPROVAL_ELICIT", Flag: "approval-elicit", Default: "false", Kind: KindBool,
			Meaning: "`true`: where the MCP client declares elicitation, a gated email also asks you in the client (accept approves it like a file move; decline, cancel or a timeout is no); off by default because some clients let a hook or an auto-approve setting answer for you"},
		{Name: "SEND_LIMIT_PER_HOUR", Flag: "send-limit", Default: "10", Kind: KindInt,
			Min: 1, Max: 10000, MaxNote: " (to send nothing, keep DEV_MODE=true)",
			Meaning: "rolling one-hour limit over sends and replies, shared by every process on the store"},
		{Name: "ORGANIZE_LIMIT", Flag: "organize-limit", Default: "300", Kind: KindInt,
			Min: 1, Max: 100000,
			Meaning: "rolling one-hour limit over the organising calls run without approval (`modify_labels`, `untrash_email`, `create_label`, `rename_label`, `delete_filter`; audited), shared by every process on the store"},
		{Name: "ATTACHMENTS_DIR", Flag: "attachments-dir", Default: homePrefix + "attachments", Kind: KindPath,
			Meaning: "the one folder files may be attached from (`attachments` of send/draft/reply; symlinks resolved, anything outside refused); created 0700 on first use"},
	}),
	inSection(SectionServing, []Var{
		{Name: "MAILGATE_TOOLS", Flag: "tools", Default: "email,agentmail", Kind: KindToolSets,
			Choices: []string{ToolsEmail, ToolsAgentMail, ToolsChannels, ToolsMailbox},
			Meaning: "tool sets to expose: `email`, `agentmail`, `channels`, `mailbox`"},
		{Name: "AGENT_MAIL_HTTP_ADDR", Flag: "http-addr", Default: "127.0.0.1:8765", Kind: KindString,
			Meaning: "address for `serve --http`"},
		{Name: "AGENT_MAIL_PATH", Flag: "http-path", Default: "/mcp/", Kind: KindString,
			Meaning: "HTTP endpoint path", check: func(v string) string {
				if !strings.HasPrefix(v, "/") {
					return "must start with /"
				}
				return ""
			}},
		{Name: "AGENT_MAIL_BEARER_TOKEN", Flag: "bearer-token", Shown: "none", Kind: KindString,
			Meaning: "required on every HTTP request (unless `AGENT_MAIL_HTTP_AUTH=none`); at least 32 characters (`openssl rand -hex 32`); when unset, the first `serve --http` generates one and saves it in the home's settings file"},
		{Name: "AGENT_MAIL_HTTP_AUTH", Flag: "http-auth", Default: "token", Kind: KindChoice,
			Choices: []string{"token", "none"},
			Meaning: "`token`: every HTTP request needs `AGENT_MAIL_BEARER_TOKEN` (generated and saved by the first `serve --http` when unset); `none`: no token, for clients that cannot send one, only on a loopback address, only for the agent-mail tool sets (never `email`), Origin and Host still checked, with a WARN line at start"},
		{Name: "AGENT_MAIL_HTTP_RATE_LIMIT", Flag: "http-rate-limit", Default: "2000", Kind: KindInt,
			Min: 0, Max: 1_000_000, MinNote: " (no limit)", MaxNote: " requests per second",
			Meaning: "HTTP requests per second per client IP (bursts of twice that), answered 429 beyond; `0` turns it off (requests without a valid token keep their own 10 per second)"},
		{Name: "AGENT_MAIL_JWT_KEY_FILE", Flag: "jwt-key-file", Shown: "none", Kind: KindString,
			Meaning: "also accept JWTs on HTTP, verified with this file's key: a PEM public key (RSA, ECDSA, Ed25519) or a JWKS document (`oct` keys there are HMAC secrets); relative paths are from `MAILGATE_HOME`; the claim `role` (`read`, `agent` or `admin`) and the optional `projects` limit what a token may do (docs/http-auth.md)"},
		{Name: "AGENT_MAIL_JWKS_URL", Flag: "jwks-url", Shown: "none", Kind: KindString,
			Meaning: "also accept JWTs on HTTP, verified with the keys of this JWKS URL (fetched at the first token, cached 10 minutes, fetched again for an unknown `kid`); instead of `AGENT_MAIL_JWT_KEY_FILE`"},
		{Name: "AGENT_MAIL_JWT_ISSUER", Flag: "jwt-issuer", Shown: "not checked", Kind: KindString,
			Meaning: "a JWT's `iss` must be this"},
		{Name: "AGENT_MAIL_JWT_AUDIENCE", Flag: "jwt-audience", Shown: "not checked", Kind: KindString,
			Meaning: "a JWT's `aud` must name this"},
		{Name: "AGENT_MAIL_METRICS", Flag: "metrics", Default: "auth", Kind: KindChoice,
			Choices: []string{"auth", "open", "off"},
			Meaning: "`/metrics` of `serve --http` (Prometheus text format): `auth` behind the bearer token (or an `admin` JWT), `open` without it (loopback addresses only), `off` not served"},
		{Name: "AGENT_MAIL_METRICS_ADDR", Flag: "metrics-addr", Shown: "none", Kind: KindString,
			Meaning: "serve `/metrics` on this separate loopback address instead, without authentication (e.g. `127.0.0.1:9465`)"},
		{Name: "MAILGATE_LOG_LEVEL", Default: "info", Kind: KindLogLevel,
			Meaning: "stderr log level: `debug`, `info`, `warn`, `error` (`serve --log-level` overrides it; `mailgate mailbox` logs at `warn` unless it is set)"},
	}),
	inSection(SectionAgents, []Var{
		{Name: "AGENT_MAIL_MIRROR", Flag: "mirror", Default: "off", Kind: KindChoice,
			Choices: []string{"off", "gmail"},
			Meaning: "`gmail`: copy agent threads into the mailbox under a label `AgentMail/<project>` (inserted, never sent; off in DEV_MODE)"},
		{Name: "AGENT_NAME_ENFORCEMENT_MODE", Flag: "name-mode", Default: "coerce", Kind: KindChoice,
			Choices: []string{"coerce", "strict", "always_auto"},
			Meaning: "`register_agent` names: `coerce` (an invalid or taken name is replaced, and the answer says so), `strict` (a new name must be an adjective+noun like GreenCastle; anything else is refused), `always_auto` (always generated)"},
		{Name: "AGENT_MAIL_BIND_SENDERS", Flag: "bind-senders", Default: "false", Kind: KindBool,
			Meaning: "`true`: a session may send only as the agents it registered (or whose `registration_token` it passes as `sender_token`); `false` trusts `sender_name` as the reference does (see https://github.com/mailgate/mailgate/blob/main/docs/security-agents.md)"},
		{Name: "AGENT_MAIL_ACK_DEADLINE", Flag: "ack-deadline", Default: "30m", Kind: KindString,
			Meaning: "ACK escalation: an `ack_required` message not acknowledged this long after delivery gets a reminder to the recipient, and twice as long a notice to the sender; `off` disables it; per project: `30m,/abs/backend=10m,web=off` (slug or absolute path; see https://github.com/mailgate/mailgate/blob/main/docs/compat.md)",
			check: func(v string) string {
				if _, err := agentmail.ParseDeadlines(v); err != nil {
					return err.Error()
				}
				return ""
			}},
		{Name: "AGENT_MAIL_ACK_RESERVE", Flag: "ack-reserve", Default: "false", Kind: KindBool,
			Meaning: "`true`: the sender's notice also reserves for the sender, shared, for an hour, the paths the unacknowledged message names in code spans (`src/auth.go`) or attaches"},
		{Name: "TOOLS_FILTER_PROFILE", Flag: "tools-profile", Default: "full", Kind: KindChoice,
			Choices: []string{"full", "minimal"},
			Meaning: "agent-mail tools to list: `full` (all), or `minimal` (`health_check`, `ensure_project`, `register_agent`, `send_message`, `fetch_inbox`, `acknowledge_message`)"},
	}),
)

// inSection sets the section of each of vars.
func inSection(s Section, vars []Var) []Var {
	for i := range vars {
		vars[i].Section = s
	}
	return vars
}

// Lookup returns the setting named name.
func Lookup(name string) (Var, bool) {
	v, ok := lookupVar(name)
	if !ok {
		return Var{}, false
	}
	return *v, true
}

func lookupVar(name string) (*Var, bool) {
	for i := range Vars {
		if Vars[i].Name == name {
			return &Vars[i], true
		}
	}
	return nil, false
}

// Usage is the setting's meaning as plain text, for a flag's usage line.
func (v *Var) Usage() string { return strings.ReplaceAll(v.Meaning, "`", "") }

// DefaultText is the default as documented: the value, or what an empty
// one means ("Google's", "none").
func (v *Var) DefaultText() string {
	if v.Default == "" {
		return v.Shown
	}
	return v.Default
}

// parse turns the setting's text s (from a flag, the environment or a .env
// file, "" when unset) into its value in c. home is the resolved home; a
// KindPath error (a "~/" without HOME) is returned like any other.
func (v *Var) parse(c *Config, s string, getenv func(string) string) error {
	dst := c.field(v.Name)
	bad := func(format string, args ...any) error {
		return &Error{Var: v.Name, Msg: fmt.Sprintf("%q ", s) + fmt.Sprintf(format, args...)}
	}
	switch v.Kind {
	case KindPath:
		p, err := homePath(c.Home, v.Name, s, v.Default, getenv)
		dst.SetString(p)
		return err
	case KindDB:
		switch {
		case isDBURL(s):
			dst.SetString(s) // a PostgreSQL URL or keyword/value string
			return checkDB(s)
		case s == "" && !exists(filepath.Join(c.Home, "state.db")) && exists(filepath.Join(c.Home, legacyDB)):
			// Homes made before the store moved to state.db keep theirs.
			dst.SetString(filepath.Join(c.Home, legacyDB))
			return nil
		}
		p, err := homePath(c.Home, v.Name, s, v.Default, getenv)
		dst.SetString(p)
		return err
	case KindString:
		if v.Default != "" {
			s = orDefault(s, v.Default)
		}
		if v.check != nil {
			if why := v.check(s); why != "" {
				return bad("%s", why)
			}
		}
		dst.SetString(s)
		return nil
	}
	s = orDefault(s, v.Default)
	switch v.Kind {
	case KindBool:
		b, err := parseBool(v.Name, s)
		dst.SetBool(b)
		return err
	case KindInt:
		n, err := strconv.Atoi(s)
		if err != nil || n < v.Min || n > v.Max {
			return bad("is not a whole number from %d%s to %d%s", v.Min, v.MinNote, v.Max, v.MaxNote)
		}
		dst.SetInt(int64(n))
	case KindDuration:
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return bad("is not a positive duration such as 24h or 90m")
		}
		dst.SetInt(int64(d))
	case KindChoice:
		s = strings.ToLower(s)
		dst.SetString(s)
		for _, ch := range v.Choices {
			if s == ch {
				return nil
			}
		}
		return &Error{Var: v.Name, Msg: fmt.Sprintf("%q is not one of %s", s, strings.Join(v.Choices, ", "))}
	case KindToolSets:
		tools, err := parseTools(v, s)
		dst.Set(reflect.ValueOf(tools))
		return err
	}
	return nil
}

// homePath resolves a path setting: its default in the home when s is
// empty; "~/" from HOME; a relative path from the home, never from the
// working directory, which is undefined under Claude Desktop.
func homePath(home, name, s, def string, getenv func(string) string) (string, error) {
	if s == "" {
		return filepath.Join(home, filepath.FromSlash(strings.TrimPrefix(def, homePrefix))), nil
	}
	p, err := expandHome(name, s, getenv)
	return absFrom(home, p), err
}

// Loaded reports whether Load reads the setting: whether a field of
// Config is tagged with its name.
func (v *Var) Loaded() bool { return new(Config).field(v.Name).IsValid() }

// field is the field of c tagged `setting:"name"`, or the zero Value.
func (c *Config) field(name string) reflect.Value {
	rv := reflect.ValueOf(c).Elem()
	for i := range rv.NumField() {
		if rv.Type().Field(i).Tag.Get("setting") == name {
			return rv.Field(i)
		}
	}
	return reflect.Value{}
}

// Value is the setting's value in c as `mailgate config get` prints it;
// ok is false when name is not a setting Load reads.
func Value(c *Config, name string) (value string, ok bool) {
	f := c.field(name)
	if !f.IsValid() {
		return "", false
	}
	switch v := f.Interface().(type) {
	case []string:
		return strings.Join(v, ","), true
	default:
		return fmt.Sprint(v), true // a time.Duration prints as 24h0m0s
	}
}

// EnvExample renders .env.example from Vars.
func EnvExample() string {
	var b strings.Builder
	b.WriteString(envExampleHead)
	var section Section
	for _, v := range Vars {
		if v.Section != section {
			section = v.Section
			fmt.Fprintf(&b, "\n# --- %s ---\n\n", section)
		}
		text := v.Usage()
		if !strings.HasPrefix(v.Meaning, "`") {
			text = strings.ToUpper(text[:1]) + text[1:]
		}
		for _, line := range wrap(text+". Default: "+v.DefaultText(), 108) {
			b.WriteString("# " + line + "\n")
		}
		value := v.Default
		if !v.Loaded() || v.Kind == KindHome || v.Kind == KindPath || v.Kind == KindDB {
			value = "" // the default follows MAILGATE_HOME, or the command chooses it
		}
		fmt.Fprintf(&b, "%s=%s\n", v.Name, value)
	}
	return b.String()
}

const envExampleHead = `# mailgate configuration: the home's settings file, $MAILGATE_HOME/.env (by default ~/.mailgate/.env).
# Every mailgate command and every server reads it, so the terminal and the servers agree. Change it with
# "mailgate config set NAME VALUE" (or copy this file there, mode 0600). Precedence: flags > environment >
# this file > defaults. Relative paths are taken from MAILGATE_HOME. Servers read it when they start.
#
# Generated from internal/config/settings.go: go test ./internal/config -run TestEnvExample -update
`

// READMETable renders README's configuration table from Vars.
func READMETable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, v := range Vars {
		def := v.Shown
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, def, v.Meaning)
	}
	return b.String()
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
