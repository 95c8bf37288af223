package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
)

// claudeServer is one entry of an mcpServers map (Claude Desktop's
// claude_desktop_config.json, Claude Code's ~/.claude.json).
type claudeServer struct {
	Type    string            `json:"type,omitempty"` // Claude Code: "stdio"
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// The clients claude-config knows.
const (
	clientDesktop = "claude-desktop"
	clientCode    = "claude-code"
	clientCodex   = "codex"
)

// claudeConfigCmd prints the entry that starts mailgate for an MCP client,
// or with --install writes it into the client's configuration file. stdout
// gets the entry and nothing else, so it can be redirected or piped into a
// JSON tool; where to put it goes to stderr.
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
//
// The one exception is the choice of tools, which is the client's, not the
// home's: Claude Desktop's user wants email, not 24 coding-agent tools and
// their 60 KB of schemas, while the coding agents on the same machine want
// agent mail from the same home. So the entry selects its tool sets in its
// args ("serve --tools email"), visible on the command line the client runs,
// rather than in a setting every other server would read, or in env, where
// it would look like one of the settings kept out of the client's file.
// Claude Desktop's entry selects email alone unless --tools says otherwise;
// the coding agents' entries serve what the home's settings say.
func claudeConfigCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("claude-config", flag.ContinueOnError)
	sandbox := fset.Bool("sandbox", false, `add --sandbox to "args": the client gets the built-in sandbox mailbox (no Google account)`)
	name := fset.String("name", "mailgate", "the server's `NAME` in the client's configuration")
	install := fset.Bool("install", false, "write the entry into the client's configuration file (merged, after a timestamped backup) instead of printing it")
	client := fset.String("client", clientDesktop, "the MCP client `NAME`: claude-desktop, claude-code (~/.claude.json, or the JSON claude mcp add-json takes) or codex (~/.codex/config.toml)")
	file := fset.String("config-file", "", "with --install: the client's configuration `FILE` (default: where the client keeps it)")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	if fset.NArg() > 0 {
		return usageError("claude-config", "unexpected argument %q", fset.Arg(0))
	}
	switch *client {
	case clientDesktop, clientCode, clientCodex:
	default:
		return usageError("claude-config", "--client %q is not one of claude-desktop, claude-code, codex", *client)
	}
	if *file != "" && !*install {
		return usageError("claude-config", "--config-file goes with --install")
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
	tools := ""
	if flagGiven(fset, "tools") {
		tools = strings.Join(cfg.Tools, ",")
	} else if *client == clientDesktop {
		tools = config.ToolsEmail
	}
	if tools != "" {
		entry.Args = append(entry.Args, "--tools", tools)
	}
	if *sandbox {
		entry.Args = append(entry.Args, "--sandbox")
	}
	if *client == clientCode {
		entry.Type = "stdio"
	}

	target := *file
	if target == "" {
		target = clientConfigPath(*client, env.getenv)
	} else {
		target, _ = filepath.Abs(target)
	}
	if *install {
		backup, err := installEntry(*client, target, *name, entry, time.Now())
		switch {
		case errors.Is(err, errEntryUnchanged):
			fmt.Fprintf(env.stdout, "The %q entry in %s is already this one: nothing was written (and no backup made).\n", *name, target)
		case err != nil:
			return err
		default:
			fmt.Fprintf(env.stdout, "Wrote the %q entry into %s.\n", *name, target)
		}
		if backup != "" {
			fmt.Fprintf(env.stdout, "The file as it was is kept in %s.\n", backup)
		}
	} else {
		out, err := clientEntryText(*client, *name, entry)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprint(env.stdout, out); err != nil {
			return fmt.Errorf("writing the configuration: %w", err)
		}
	}

	w := env.stderr
	if *install {
		w = env.stdout
	}
	switch *client {
	case clientDesktop:
		_, logs := claudeDesktopPaths(runtime.GOOS, env.getenv)
		if !*install {
			fmt.Fprintf(w, "Put the %q entry into %s\n(keep any other servers under \"mcpServers\"), or run this again with --install to do it; then quit Claude Desktop completely and start it again.\n", *name, target)
		} else {
			fmt.Fprintln(w, "Quit Claude Desktop completely and start it again.")
		}
		fmt.Fprintf(w, "mailgate's messages then appear in %s.\n", filepath.Join(logs, "mcp-server-"+*name+".log"))
	case clientCode:
		if !*install {
			fmt.Fprintf(w, "Add it to Claude Code with: claude mcp add-json --scope user %s \"$(mailgate claude-config --client claude-code)\"\n(or run this again with --install to write it into %s).\n", *name, target)
		} else {
			fmt.Fprintln(w, "Start a new Claude Code session; \"claude mcp list\" shows the server. (Claude Code rewrites this file while it runs:")
			fmt.Fprintln(w, "if the entry is gone afterwards, run this again with Claude Code closed, or use claude mcp add-json.)")
		}
	case clientCodex:
		if !*install {
			fmt.Fprintf(w, "Append it to %s (or run this again with --install to do it).\n", target)
		} else {
			fmt.Fprintln(w, "Start a new Codex session to use it.")
		}
	}
	if tools != "" && !flagGiven(fset, "tools") {
		fmt.Fprintf(w, "The entry serves the %s tools only (--tools email,agentmail for the agent-mail tools too).\n", tools)
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(w, "Warning: %s is a temporary build of go run: install mailgate (go install, or make build) and run claude-config from there.\n", self)
	}
	for _, s := range saved {
		fmt.Fprintf(w, "Saved %s in %s: the server and every mailgate command read it.\n", s, cfg.SettingsFile)
	}
	warnShellOnly(env, w, cfg, fset)
	if !*sandbox && (tools == "" && cfg.HasTools(config.ToolsEmail) || strings.Contains(tools, config.ToolsEmail)) {
		if _, err := os.Stat(cfg.TokenFile); err != nil {
			fmt.Fprintf(w, "No Gmail token at %s yet: run \"mailgate auth\" (until then the email tools say so), or use --sandbox to try without Google.\n", cfg.TokenFile)
		}
	}
	if *sandbox {
		fmt.Fprintf(w, "Home %s; the sandbox server started from this entry delivers approved emails into its own mailbox (kept in %s) whatever DEV_MODE says: nothing leaves this machine.\n", cfg.Home, sandboxDir(cfg))
		return nil
	}
	// What the server started from this entry will have: the home's
	// settings, not this shell's.
	dev := cfg.DevMode
	if c, err := homeSettingsOnly(env, cfg); err == nil {
		dev = c.DevMode
	}
	fmt.Fprintf(w, "Home %s; a server started from this entry gets DEV_MODE=%t (change it with: mailgate config set DEV_MODE …). Run \"mailgate doctor\" to check everything first.\n", cfg.Home, dev)
	return nil
}

func flagGiven(fset *flag.FlagSet, name string) bool {
	given := false
	fset.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// clientConfigPath is where client keeps its MCP servers.
func clientConfigPath(client string, getenv func(string) string) string {
	switch client {
	case clientCode:
		return filepath.Join(userHomeDir(getenv), ".claude.json")
	case clientCodex:
		if h := getenv("CODEX_HOME"); h != "" {
			return filepath.Join(h, "config.toml")
		}
		return filepath.Join(userHomeDir(getenv), ".codex", "config.toml")
	}
	file, _ := claudeDesktopPaths(runtime.GOOS, getenv)
	return file
}

// clientEntryText is the entry as printed without --install: Claude
// Desktop's whole file, the JSON claude mcp add-json takes, or Codex's
// TOML table.
func clientEntryText(client, name string, e claudeServer) (string, error) {
	var v any = map[string]any{"mcpServers": map[string]claudeServer{name: e}}
	switch client {
	case clientCode:
		v = e
	case clientCodex:
		return codexTable(name, e), nil
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the configuration: %w", err)
	}
	return string(out) + "\n", nil
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
		// MAILGATE_TOOLS given here is the entry's choice (its args), not
		// the home's.
		if err != nil || name == "" || name == "MAILGATE_HOME" || name == "MAILGATE_TOOLS" {
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
func warnShellOnly(env *environment, w io.Writer, cfg *config.Config, fset *flag.FlagSet) {
	file, _ := godotenv.Read(cfg.SettingsFile)
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[config.FlagVar(f.Name)] = true })
	for _, v := range config.Vars {
		val := strings.TrimSpace(env.getenv(v.Name))
		if v.Name == "MAILGATE_HOME" || val == "" || set[v.Name] || file[v.Name] == val {
			continue
		}
		val = shownValue(v.Name, val)
		fmt.Fprintf(w, "Note: %s=%s is set in this shell only; a server started by Claude Desktop will not see it. To make it a setting: mailgate config set %s %s\n",
			v.Name, val, v.Name, val)
	}
}

// shownValue is a setting as it may be printed: never a secret.
func shownValue(name, val string) string {
	switch {
	case name == "AGENT_MAIL_BEARER_TOKEN":
		return "…"
	case name == "MAILGATE_DB" && store.IsPostgres(val):
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
