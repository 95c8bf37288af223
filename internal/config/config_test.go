package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// load runs Load with env, working directory /work/dir, and HOME=/home/u
// unless env has HOME (set "HOME": "" for an environment without it).
func load(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	getenv := func(k string) string {
		if v, ok := env[k]; ok || k != "HOME" {
			return v
		}
		return "/home/u"
	}
	return Load(flag.NewFlagSet("t", flag.ContinueOnError), args, getenv, "/work/dir")
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/mg"})
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		c.VaultPath: "/home/u/mg/vault", c.CredentialsFile: "/home/u/mg/auth/credentials.json",
		c.TokenFile: "/home/u/mg/auth/token.json", c.AuditDir: "/home/u/mg/audit", c.DB: "/home/u/mg/state.db",
		c.HTTPAddr: "127.0.0.1:8765", c.HTTPPath: "/mcp/", c.ApprovalMode: "content", c.Mirror: "off",
		strings.Join(c.Tools, ","): "email,agentmail", c.NameMode: "coerce", c.ToolsProfile: "full",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if !c.DevMode || c.SendLimit != 10 || c.ApprovalTTL != 24*time.Hour || c.HTTPRateLimit != 2000 {
		t.Errorf("dev=%v limit=%d ttl=%v http rate=%d", c.DevMode, c.SendLimit, c.ApprovalTTL, c.HTTPRateLimit)
	}
}

func TestPathsAreAbsolute(t *testing.T) {
	t.Parallel()
	// No MAILGATE_HOME: ~/.mailgate, never the working directory; relative
	// paths from the home.
	c, err := load(t, map[string]string{"VAULT_PATH": "v", "MAILGATE_DB": "../db/s.db", "GMAIL_TOKEN_FILE": "~/tok.json", "HOME": "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/home/u/.mailgate" || !c.HomeIsDefault || c.VaultPath != "/home/u/.mailgate/v" || c.DB != "/home/u/db/s.db" || c.TokenFile != "/home/u/tok.json" {
		t.Fatalf("%+v", c)
	}
	if c.SettingsFile != "/home/u/.mailgate/.env" {
		t.Fatalf("settings file %q", c.SettingsFile)
	}
	// A relative MAILGATE_HOME is the user's explicit choice, taken from
	// the working directory.
	if c, err := load(t, map[string]string{"MAILGATE_HOME": "mg"}); err != nil || c.Home != "/work/dir/mg" || c.HomeIsDefault {
		t.Fatalf("relative home: %+v %v", c, err)
	}
}

// The default home is the same from every working directory; without HOME
// it is refused with one line naming MAILGATE_HOME, and the root folder is
// never a home (claude-config run from / once wrote "MAILGATE_HOME": "/").
func TestDefaultHome(t *testing.T) {
	t.Parallel()
	for _, cwd := range []string{"/", "/work/dir", "/tmp/x"} {
		c, err := Load(flag.NewFlagSet("t", flag.ContinueOnError), nil, func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }, cwd)
		if err != nil || c.Home != "/home/u/.mailgate" || c.VaultPath != "/home/u/.mailgate/vault" || c.DB != "/home/u/.mailgate/state.db" {
			t.Fatalf("cwd %s: %+v %v", cwd, c, err)
		}
	}
	// The default home named explicitly is still the default one.
	if c, err := load(t, map[string]string{"MAILGATE_HOME": "~/.mailgate/"}); err != nil || !c.HomeIsDefault || c.Home != "/home/u/.mailgate" {
		t.Fatalf("explicit default: %+v %v", c, err)
	}
	if c, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/other"}); err != nil || c.HomeIsDefault {
		t.Fatalf("another home: %+v %v", c, err)
	}
	for _, env := range []map[string]string{{"HOME": ""}, {"MAILGATE_HOME": "/"}, {"MAILGATE_HOME": "/..", "HOME": "/home/u"}} {
		_, err := load(t, env)
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Var != "MAILGATE_HOME" || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want an error naming MAILGATE_HOME", env, err)
		}
	}
}

// A home made when the store was .mailgate/state.db keeps its store.
func TestLegacyStoreInHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".mailgate"), 0o700)
	os.WriteFile(filepath.Join(home, ".mailgate", "state.db"), nil, 0o600)
	c, err := load(t, map[string]string{"MAILGATE_HOME": home})
	if err != nil || c.DB != filepath.Join(home, ".mailgate", "state.db") {
		t.Fatalf("%v %v", c, err)
	}
	os.WriteFile(filepath.Join(home, "state.db"), nil, 0o600)
	if c, err := load(t, map[string]string{"MAILGATE_HOME": home}); err != nil || c.DB != filepath.Join(home, "state.db") {
		t.Fatalf("%v %v", c, err)
	}
}

// The home's own .env may repeat the home but not point elsewhere.
func TestSettingsFileCannotMoveHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".env"), []byte("MAILGATE_HOME="+home+"\nDEV_MODE=false\n"), 0o600)
	if c, err := load(t, map[string]string{"MAILGATE_HOME": home}); err != nil || c.DevMode {
		t.Fatalf("%v %v", c, err)
	}
	os.WriteFile(filepath.Join(home, ".env"), []byte("MAILGATE_HOME=/elsewhere\n"), 0o600)
	var cerr *Error
	if _, err := load(t, map[string]string{"MAILGATE_HOME": home}); !errors.As(err, &cerr) || cerr.Var != "MAILGATE_HOME" {
		t.Fatalf("got %v", err)
	}
}

// "~/" is expanded with HOME in MAILGATE_HOME (from the environment or a
// .env) and in every path; without HOME it is refused, naming the variable.
func TestTildePaths(t *testing.T) {
	t.Parallel()
	c, err := load(t, map[string]string{"MAILGATE_HOME": "~/mg", "MAILGATE_DB": "~/.mailgate/agents.db", "HOME": "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/home/u/mg" || c.VaultPath != "/home/u/mg/vault" || c.DB != "/home/u/.mailgate/agents.db" {
		t.Fatalf("home %q vault %q db %q", c.Home, c.VaultPath, c.DB)
	}

	dir := t.TempDir()
	envFile := filepath.Join(dir, ".env")
	if err := os.WriteFile(envFile, []byte("MAILGATE_HOME=~/from-dotenv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := load(t, map[string]string{"HOME": "/home/u"}, "-env-file", envFile); err != nil || c.Home != "/home/u/from-dotenv" {
		t.Fatalf(".env home: %v %v", c, err)
	}

	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"MAILGATE_HOME": "~/mg", "HOME": ""}, nil, "MAILGATE_HOME"},
		{map[string]string{"MAILGATE_HOME": "/m", "MAILGATE_DB": "~/agents.db", "HOME": ""}, nil, "MAILGATE_DB"},
		{map[string]string{"MAILGATE_HOME": "/m", "VAULT_PATH": "~", "HOME": ""}, nil, "VAULT_PATH"},
		{map[string]string{"HOME": ""}, []string{"-env-file", envFile}, "MAILGATE_HOME"},
	} {
		_, err := load(t, tc.env, tc.args...)
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Var != tc.want || !strings.Contains(err.Error(), "HOME is not set") {
			t.Errorf("%v %v without HOME: %v, want an error naming %s", tc.env, tc.args, err, tc.want)
		}
	}
	// "~user/…" and "~" inside a path are not expanded: only a leading "~/".
	if c, err := load(t, map[string]string{"VAULT_PATH": "a~/v", "HOME": "/home/u"}); err != nil || c.VaultPath != "/home/u/.mailgate/a~/v" {
		t.Fatalf("a~/v: %v %v", c, err)
	}
}

// A PostgreSQL URL is kept as given (not taken for a relative path); a bad
// one is refused without echoing its password.
func TestPostgresURL(t *testing.T) {
	t.Parallel()
	url := "postgres://mail:pw@db.internal:5432/mailgate?sslmode=require"
	c, err := load(t, map[string]string{"MAILGATE_DB": url})
	if err != nil || c.DB != url {
		t.Fatalf("DB = %q, %v", c.DB, err)
	}
	_, err = load(t, map[string]string{"MAILGATE_DB": "postgres://mail:hunter2@db:notaport/mailgate"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad URL: %v", err)
	}
}

func TestPrecedenceFlagsEnvDotenv(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".env"), []byte("SEND_LIMIT_PER_HOUR=3\nAPPROVAL_MODE=recipient\nDEV_MODE=false\n"), 0o600)
	c, err := load(t, map[string]string{"MAILGATE_HOME": home, "APPROVAL_MODE": "content"}, "-send-limit", "7")
	if err != nil {
		t.Fatal(err)
	}
	if c.SendLimit != 7 || c.ApprovalMode != "content" || c.DevMode {
		t.Fatalf("limit=%d (flag wins) mode=%s (env wins) dev=%v (.env applies)", c.SendLimit, c.ApprovalMode, c.DevMode)
	}
	if c.EnvFile != filepath.Join(home, ".env") {
		t.Fatalf("EnvFile = %q", c.EnvFile)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     map[string]string
		args    []string
		wantVar string
	}{
		{map[string]string{"DEV_MODE": "maybe"}, nil, "DEV_MODE"},
		{map[string]string{"APPROVAL_MODE": "trust"}, nil, "APPROVAL_MODE"},
		{map[string]string{"APPROVAL_TTL": "-1h"}, nil, "APPROVAL_TTL"},
		{map[string]string{"APPROVAL_TTL": "soon"}, nil, "APPROVAL_TTL"},
		{map[string]string{"SEND_LIMIT_PER_HOUR": "ten"}, nil, "SEND_LIMIT_PER_HOUR"},
		{map[string]string{"SEND_LIMIT_PER_HOUR": "-1"}, nil, "SEND_LIMIT_PER_HOUR"},
		{map[string]string{"SEND_LIMIT_PER_HOUR": "0"}, nil, "SEND_LIMIT_PER_HOUR"},
		{map[string]string{"MAILGATE_TOOLS": "email,fax"}, nil, "MAILGATE_TOOLS"},
		{map[string]string{"MAILGATE_TOOLS": "agentmail,channels"}, nil, "MAILGATE_TOOLS"},
		{map[string]string{"MAILGATE_TOOLS": " , "}, nil, "MAILGATE_TOOLS"},
		{map[string]string{"AGENT_MAIL_MIRROR": "imap"}, nil, "AGENT_MAIL_MIRROR"},
		{map[string]string{"AGENT_NAME_ENFORCEMENT_MODE": "lenient"}, nil, "AGENT_NAME_ENFORCEMENT_MODE"},
		{map[string]string{"TOOLS_FILTER_PROFILE": "core"}, nil, "TOOLS_FILTER_PROFILE"},
		{map[string]string{"AGENT_MAIL_PATH": "mcp"}, nil, "AGENT_MAIL_PATH"},
		{map[string]string{"AGENT_MAIL_HTTP_RATE_LIMIT": "fast"}, nil, "AGENT_MAIL_HTTP_RATE_LIMIT"},
		{map[string]string{"AGENT_MAIL_HTTP_RATE_LIMIT": "-5"}, nil, "AGENT_MAIL_HTTP_RATE_LIMIT"},
		{map[string]string{"AGENT_MAIL_HTTP_RATE_LIMIT": "1.5"}, nil, "AGENT_MAIL_HTTP_RATE_LIMIT"},
		{map[string]string{"MAILGATE_DB": "postgres://u:pw@db:notaport/mail"}, nil, "MAILGATE_DB"},
		{map[string]string{"MAILGATE_DB": "postgres:mail"}, nil, "MAILGATE_DB"},
		{map[string]string{"MAILGATE_DB": "postgresql://db/mail?sslmode=sometimes"}, nil, "MAILGATE_DB"},
		{nil, []string{"-env-file", "/nonexistent/.env"}, "--env-file"},
		{nil, []string{"-no-such-flag"}, ""},
	}
	for _, tt := range tests {
		_, err := load(t, tt.env, tt.args...)
		cerr, ok := err.(*Error)
		if !ok {
			t.Errorf("%v %v: err = %v, want a *config.Error", tt.env, tt.args, err)
			continue
		}
		if cerr.Var != tt.wantVar || strings.Contains(cerr.Error(), "\n") {
			t.Errorf("%v: error %q names %q, want %q on one line", tt.env, cerr, cerr.Var, tt.wantVar)
		}
	}
}

var update = flag.Bool("update", false, "rewrite .env.example and README's configuration table from Vars")

// TestEnvExampleMatchesTable: .env.example is rendered from Vars, so a
// setting, its default and its meaning are written once.
func TestEnvExampleMatchesTable(t *testing.T) {
	t.Parallel()
	const path = "../../.env.example"
	if *update {
		if err := os.WriteFile(path, []byte(EnvExample()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != EnvExample() {
		t.Errorf(".env.example differs from config.Vars: go test ./internal/config -run TestEnvExampleMatchesTable -update")
	}
}

// readmeTable matches README's configuration table between its markers.
var readmeTable = regexp.MustCompile(`(?s)(<!-- config table: [^\n]*-->\n)(.*?)(<!-- end config table -->)`)

// TestREADMEConfigTableMatches: README's configuration table is rendered
// from Vars.
func TestREADMEConfigTableMatches(t *testing.T) {
	t.Parallel()
	const path = "../../README.md"
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := readmeTable.FindSubmatchIndex(readme)
	if m == nil {
		t.Fatal("README.md has no configuration table between <!-- config table: … --> and <!-- end config table -->")
	}
	if *update {
		readme = slices.Concat(readme[:m[4]], []byte(READMETable()), readme[m[5]:])
		if err := os.WriteFile(path, readme, 0o644); err != nil {
			t.Fatal(err)
		}
		m = readmeTable.FindSubmatchIndex(readme)
	}
	if got := string(readme[m[4]:m[5]]); got != READMETable() {
		t.Errorf("README's configuration table differs from config.Vars: go test ./internal/config -run TestREADMEConfigTableMatches -update\ngot:\n%s\nwant:\n%s", got, READMETable())
	}
}

// TestVarsAreWellFormed: every setting Load reads has a flag and a place in
// Config, every default parses, and names and flags are unique.
func TestVarsAreWellFormed(t *testing.T) {
	t.Parallel()
	names, flags := map[string]bool{}, map[string]bool{}
	for _, v := range Vars {
		if names[v.Name] || v.Flag != "" && flags[v.Flag] {
			t.Errorf("%s: name or flag %q twice", v.Name, v.Flag)
		}
		names[v.Name], flags[v.Flag] = true, true
		if v.Meaning == "" || v.Section == "" || v.DefaultText() == "" {
			t.Errorf("%s: no meaning, section or documented default", v.Name)
		}
		if v.Loaded() != (v.Flag != "") {
			t.Errorf("%s: a setting Load reads has a flag, and only those", v.Name)
		}
		if (v.Kind == KindChoice || v.Kind == KindToolSets) && len(v.Choices) == 0 {
			t.Errorf("%s: no choices", v.Name)
		}
	}
	// Every tagged field of Config is a setting.
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		if name := ct.Field(i).Tag.Get("setting"); name != "" && !names[name] {
			t.Errorf("Config.%s is tagged %q, which is not in Vars", ct.Field(i).Name, name)
		}
	}
	// Each default, given explicitly, gives what the default gives.
	def, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/mg"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Vars {
		if !v.Loaded() || v.Default == "" || v.Kind == KindHome {
			continue
		}
		c, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/mg", v.Name: strings.ReplaceAll(v.Default, "$MAILGATE_HOME", "/home/u/mg")})
		if err != nil {
			t.Errorf("%s=%s: %v", v.Name, v.Default, err)
			continue
		}
		got, _ := Value(c, v.Name)
		want, _ := Value(def, v.Name)
		if got != want {
			t.Errorf("%s=%s gives %q, unset gives %q", v.Name, v.Default, got, want)
		}
	}
}

func TestHelpFlagIsErrHelp(t *testing.T) {
	t.Parallel()
	_, err := load(t, nil, "-h")
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h gave %v, want flag.ErrHelp in the chain", err)
	}
}

// TestKeywordPostgresStringTakenForFileName is issue 18 item 8: a libpq
// keyword/value MAILGATE_DB is kept as given, not made a path under the
// home (a file named after the password), and a bad one is refused without
// quoting it.
func TestKeywordPostgresStringTakenForFileName(t *testing.T) {
	t.Parallel()
	kv := "host=db.internal dbname=mailgate user=mail password=hunter2"
	c, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/mg", "MAILGATE_DB": kv})
	if err != nil || c.DB != kv {
		t.Fatalf("DB = %q, %v", c.DB, err)
	}
	_, err = load(t, map[string]string{"MAILGATE_DB": "host=db password=hunter2 leaked"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "leaked") || !strings.Contains(err.Error(), "MAILGATE_DB") {
		t.Fatalf("bad keyword string: %v", err)
	}
	// A relative SQLite file name holding "=" is still a file name.
	if c, err := load(t, map[string]string{"MAILGATE_HOME": "/home/u/mg", "MAILGATE_DB": "data=1.db"}); err != nil || c.DB != "/home/u/mg/data=1.db" {
		t.Fatalf("DB = %q, %v", c.DB, err)
	}
}

// FuzzLoad: whatever a person writes for a setting, Load answers a Config
// or one line naming that setting; it never panics.
func FuzzLoad(f *testing.F) {
	for i, v := range Vars {
		f.Add(i, v.Default)
		f.Add(i, " "+strings.ToUpper(v.Default)+" ")
	}
	f.Add(0, "~")
	f.Add(6, "postgres://u:pw@db:notaport/x")
	f.Add(6, "host=db password=secret x")
	f.Add(11, "email,,AgentMail,email")
	f.Add(9, "1h\n")
	f.Fuzz(func(t *testing.T, i int, value string) {
		if i < 0 || strings.ContainsRune(value, 0) {
			return
		}
		v := Vars[i%len(Vars)]
		_, err := load(t, map[string]string{v.Name: value})
		if err == nil {
			return
		}
		var cerr *Error
		if !errors.As(err, &cerr) || cerr.Var != v.Name || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s=%q: %v, want one line naming %s", v.Name, value, err, v.Name)
		}
	})
}
