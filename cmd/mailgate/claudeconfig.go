package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/mailgate/mailgate/internal/config"
)

// claudeServer is one entry of claude_desktop_config.json's mcpServers.
type claudeServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// claudeConfigCmd prints a claude_desktop_config.json holding a mailgate
// entry. stdout gets the JSON and nothing else, so it can be redirected or
// piped into a JSON tool; where to put it goes to stderr.
//
// Claude Desktop starts servers with an undefined working directory and a
// thin environment, so the command is this binary's absolute path (symlinks
// resolved: a Homebrew-style link may move) and env carries MAILGATE_HOME,
// DEV_MODE and whatever this shell or these flags set that differs from the
// defaults, paths made absolute. Values from the .env file are not copied:
// serve reads that file itself, and a copy in env would silently override
// later edits to it.
func claudeConfigCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("claude-config", flag.ContinueOnError)
	sandbox := fset.Bool("sandbox", false, `add --sandbox to "args": Claude Desktop gets the built-in sandbox mailbox (no Google account)`)
	name := fset.String("name", "mailgate", "the server's name in mcpServers")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stderr)
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
	entry := claudeServer{Command: self, Args: []string{"serve"}, Env: claudeEnv(fset, cfg, env.getenv)}
	if cfg.EnvFile != "" && cfg.EnvFile != filepath.Join(cfg.Home, ".env") {
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
	if !*sandbox && cfg.HasTools(config.ToolsEmail) {
		if _, err := os.Stat(cfg.TokenFile); err != nil {
			fmt.Fprintf(env.stderr, "No Gmail token at %s yet: run \"mailgate auth\" first (or use --sandbox to try without Google).\n", cfg.TokenFile)
		}
	}
	fmt.Fprintf(env.stderr, "Run \"mailgate doctor\" to check everything first; DEV_MODE=%t.\n", cfg.DevMode)
	return nil
}

// claudeEnv is the env block: MAILGATE_HOME and DEV_MODE always, and every
// other variable set in the environment or by a flag. Settings that only
// concern serve --http (including the bearer token, a secret) are left out:
// Claude Desktop talks over stdio.
func claudeEnv(fset *flag.FlagSet, cfg *config.Config, getenv func(string) string) map[string]string {
	out := map[string]string{"MAILGATE_HOME": cfg.Home, "DEV_MODE": strconv.FormatBool(cfg.DevMode)}
	setFlags := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	paths := map[string]string{
		"VAULT_PATH": cfg.VaultPath, "GMAIL_CREDENTIALS_FILE": cfg.CredentialsFile, "GMAIL_TOKEN_FILE": cfg.TokenFile,
		"AUDIT_LOG_DIR": cfg.AuditDir, "MAILGATE_DB": cfg.DB,
	}
	for _, v := range config.Vars {
		switch v.Name {
		case "MAILGATE_HOME", "DEV_MODE", "AGENT_MAIL_HTTP_ADDR", "AGENT_MAIL_PATH", "AGENT_MAIL_BEARER_TOKEN":
			continue
		}
		raw := getenv(v.Name)
		if setFlags[v.Flag] {
			raw = fset.Lookup(v.Flag).Value.String()
		}
		if strings.TrimSpace(raw) == "" {
			continue
		}
		if p, ok := paths[v.Name]; ok {
			raw = p // absolute, resolved as serve resolves it
		}
		out[v.Name] = raw
	}
	if lvl := getenv("MAILGATE_LOG_LEVEL"); lvl != "" {
		out["MAILGATE_LOG_LEVEL"] = lvl
	}
	return out
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
