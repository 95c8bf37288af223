package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
)

// claudeServer is one entry of claude_desktop_config.json's mcpServers.
type claudeServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// claudeConfigCmd prints a claude_desktop_config.json holding a mailgate
// entry. stdout gets the JSON and nothing else, so it can be redirected or
// piped into a JSON tool; where to put it goes to stderr.
//
// Claude Desktop starts servers with an undefined working directory and a
// thin environment, so the command is this binary's absolute path (symlinks
// resolved: a Homebrew-style link may move). The entry carries nothing else
// the server can find itself: the home is the per-user default, and
// settings live in the home's settings file, which the server and every
// terminal command read, so they cannot disagree (a DEV_MODE kept in the
// client's JSON once made `mailgate approvals approve` promise that nothing
// would be sent while the server sent). So env holds MAILGATE_HOME only when
// it is not the default, and the configuration flags given here (such as
// --dev-mode=false) are saved into the settings file.
func claudeConfigCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("claude-config", flag.ContinueOnError)
	sandbox := fset.Bool("sandbox", false, `add --sandbox to "args": Claude Desktop gets the built-in sandbox mailbox (no Google account)`)
	name := fset.String("name", "mailgate", "the server's name in mcpServers")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(env.stderr, "mailgate claude-config: unexpected argument %q\n", fset.Arg(0))
		return errUsage
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return fmt.Errorf("finding this binary's path: %w", err)
	}
	saved, err := saveFlagSettings(fset, cfg)
	if err != nil {
		return err
	}
	entry := claudeServer{Command: self, Args: []string{"serve"}}
	if !cfg.HomeIsDefault {
		entry.Env = map[string]string{"MAILGATE_HOME": cfg.Home}
	}
	if cfg.EnvFile != "" && cfg.EnvFile != cfg.SettingsFile {
		// serve would look in $MAILGATE_HOME/.env, not here.
		entry.Args = append(entry.Args, "--env-file", cfg.EnvFile)
	}
	if *sandbox {
		entry.Args = append(entry.Args, "--sandbox")
	}
	out, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]claudeServer{*name: entry}}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the configuration: %w", err)
	}
	if _, err := fmt.Fprintf(env.stdout, "%s\n", out); err != nil {
		return fmt.Errorf("writing the configuration: %w", err)
	}

	file, logs := claudeDesktopPaths(runtime.GOOS, env.getenv)
	fmt.Fprintf(env.stderr, "Put the %q entry into %s\n(keep any other servers under \"mcpServers\"), then quit Claude Desktop completely and start it again.\n", *name, file)
	fmt.Fprintf(env.stderr, "mailgate's messages then appear in %s.\n", filepath.Join(logs, "mcp-server-"+*name+".log"))
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(env.stderr, "Warning: %s is a temporary build of go run: build mailgate (make build) and run bin/mailgate claude-config.\n", self)
	}
	for _, s := range saved {
		fmt.Fprintf(env.stderr, "Saved %s in %s: the server and every mailgate command read it.\n", s, cfg.SettingsFile)
	}
	warnShellOnly(env, cfg, fset)
	if !*sandbox && cfg.HasTools(config.ToolsEmail) {
		if _, err := os.Stat(cfg.TokenFile); err != nil {
			fmt.Fprintf(env.stderr, "No Gmail token at %s yet: run \"mailgate auth\" first (or use --sandbox to try without Google).\n", cfg.TokenFile)
		}
	}
	// What the server started from this entry will have: the home's
	// settings, not this shell's.
	dev := cfg.DevMode
	if c, err := homeSettingsOnly(env, cfg); err == nil {
		dev = c.DevMode
	}
	fmt.Fprintf(env.stderr, "Home %s; a server started from this entry gets DEV_MODE=%t (change it with: mailgate config set DEV_MODE …). Run \"mailgate doctor\" to check everything first.\n", cfg.Home, dev)
	return nil
}

// saveFlagSettings writes the configuration flags given on the command
// line (other than --home and --env-file) into the home's settings file, so
// that the server and the terminal both see them. Load has validated them.
// It returns "NAME=value" for each.
func saveFlagSettings(fset *flag.FlagSet, cfg *config.Config) ([]string, error) {
	var saved []string
	var err error
	fset.Visit(func(f *flag.Flag) {
		name := config.FlagVar(f.Name)
		if err != nil || name == "" || name == "MAILGATE_HOME" {
			return
		}
		if err = cfg.EnsureHome(); err == nil {
			err = config.WriteSetting(cfg.SettingsFile, name, f.Value.String())
		}
		saved = append(saved, name+"="+shownValue(name, f.Value.String()))
	})
	return saved, err
}

// warnShellOnly names the settings this shell's environment sets that the
// home's settings file does not hold: a server started by a client does not
// see them, so this terminal and that server would disagree.
func warnShellOnly(env *environment, cfg *config.Config, fset *flag.FlagSet) {
	file, _ := godotenv.Read(cfg.SettingsFile)
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[config.FlagVar(f.Name)] = true })
	for _, v := range config.Vars {
		val := strings.TrimSpace(env.getenv(v.Name))
		if v.Name == "MAILGATE_HOME" || val == "" || set[v.Name] || file[v.Name] == val {
			continue
		}
		val = shownValue(v.Name, val)
		fmt.Fprintf(env.stderr, "Note: %s=%s is set in this shell only; a server started by Claude Desktop will not see it. To make it a setting: mailgate config set %s %s\n",
			v.Name, val, v.Name, val)
	}
}

// shownValue is a setting as it may be printed: never a secret.
func shownValue(name, val string) string {
	switch {
	case name == "AGENT_MAIL_BEARER_TOKEN":
		return "…"
	case name == "MAILGATE_DB" && store.IsURL(val):
		return store.Describe(val)
	}
	return val
}

// claudeDesktopPaths returns where Claude Desktop keeps its configuration
// file and its logs on goos.
func claudeDesktopPaths(goos string, getenv func(string) string) (file, logs string) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	switch goos {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json"),
			filepath.Join(home, "Library", "Logs", "Claude")
	case "windows":
		appData := getenv("APPDATA")
		if appData == "" {
			appData = filepath.Join(getenv("USERPROFILE"), "AppData", "Roaming")
		}
		return filepath.Join(appData, "Claude", "claude_desktop_config.json"), filepath.Join(appData, "Claude", "logs")
	default:
		cfgDir := getenv("XDG_CONFIG_HOME")
		if cfgDir == "" {
			cfgDir = filepath.Join(home, ".config")
		}
		return filepath.Join(cfgDir, "Claude", "claude_desktop_config.json"), filepath.Join(cfgDir, "Claude", "logs")
	}
}
