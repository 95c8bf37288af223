package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/joho/godotenv"

	"github.com/mailgate/mailgate/internal/config"
)

const configUsage = `Usage:
  mailgate config                   show the home, its settings file and the settings in effect here
  mailgate config set NAME VALUE    save a setting (DEV_MODE, SEND_LIMIT_PER_HOUR, …) in the home's settings file
  mailgate config unset NAME        remove it (its default applies again)
  mailgate config get NAME          print the value in effect here (for scripts: TOKEN=$(mailgate config get AGENT_MAIL_BEARER_TOKEN))

The settings file ($MAILGATE_HOME/.env) is read by every mailgate command and
by every server when it starts, so the terminal and the servers agree.
Running servers keep the settings they started with: restart the MCP client
(quit Claude Desktop completely) after a change; "mailgate approvals" says
what the running servers do.
`

// configCmd shows or changes the home's settings file. It is the one place
// a person changes DEV_MODE and the rest: a setting kept in a client's
// configuration instead is invisible to the terminal.
func configCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("config", flag.ContinueOnError)
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	rest := fset.Args()
	if slices.ContainsFunc(rest, isHelpFlag) { // config set -h: the help, not a NAME "-h"
		printHelp(fset, env.stdout)
		return nil
	}
	switch {
	case len(rest) == 0:
		return showConfig(env, cfg)
	case rest[0] == "get" && len(rest) == 2:
		v, ok := settingInEffect(env, cfg, rest[1])
		if !ok {
			return notASetting(rest[1])
		}
		fmt.Fprintln(env.stdout, v)
		return nil
	case rest[0] == "set" && len(rest) == 3, rest[0] == "unset" && len(rest) == 2:
		name, value := rest[1], ""
		if rest[0] == "set" {
			value = rest[2]
			if strings.TrimSpace(value) == "" {
				return &config.Error{Var: name, Msg: "an empty value: to go back to the default, use mailgate config unset " + name}
			}
		}
		if !config.Settable(name) {
			return notASetting(name)
		}
		if value != "" {
			if err := checkSetting(env, name, value); err != nil {
				return err
			}
		}
		if err := cfg.EnsureHome(); err != nil {
			return err
		}
		if err := config.WriteSetting(cfg.SettingsFile, name, value); err != nil {
			return err
		}
		if value == "" {
			fmt.Fprintf(env.stdout, "Removed %s from %s: its default applies.\n", name, cfg.SettingsFile)
		} else {
			fmt.Fprintf(env.stdout, "Set %s=%s in %s.\n", name, shownValue(name, value), cfg.SettingsFile)
		}
		fmt.Fprintln(env.stdout, "Servers read it when they start: restart your MCP clients (quit Claude Desktop completely) for them to use it.")
		if v := env.getenv(name); v != "" {
			fmt.Fprintf(env.stdout, "Note: this shell sets %s=%s, which wins over the file for commands run here.\n", name, shownValue(name, v))
		}
		return nil
	}
	return configArgsError(rest)
}

// configArgsError says what is wrong with config's subcommand and
// arguments, and what is accepted.
func configArgsError(rest []string) error {
	verb := rest[0]
	want := map[string]int{"get": 2, "set": 3, "unset": 2}
	n, ok := want[verb]
	switch {
	case !ok:
		return usageError("config", "unknown subcommand %q: use set NAME VALUE, unset NAME, get NAME, or none to show the settings", verb)
	case len(rest) == 1:
		return usageError("config", "%s needs a setting's NAME, such as DEV_MODE", verb)
	case verb == "set" && len(rest) == 2:
		return usageError("config", "set %s needs a VALUE: mailgate config set %s VALUE (to go back to the default: mailgate config unset %s)", rest[1], rest[1], rest[1])
	}
	return usageError("config", "unexpected argument %q: %s takes %d", rest[n], verb, n-1)
}

// settingNames are the names "config set" takes.
func settingNames() []string {
	var names []string
	for _, v := range config.Vars {
		if config.Settable(v.Name) {
			names = append(names, v.Name)
		}
	}
	return names
}

// notASetting refuses a name that is not a setting, with the nearest one:
// a command line that is wrong (exit status 2), like an unknown flag.
func notASetting(name string) error {
	if name == "MAILGATE_HOME" { // a variable, but it locates the settings file itself
		return &config.Error{Var: name, Msg: "not kept in the home's settings file (it locates that file): set it in the environment of every command and client, or give --home DIR"}
	}
	msg := "not a setting of the home's settings file"
	if near := nearest(name, settingNames()); near != "" {
		msg += fmt.Sprintf("; did you mean %s?", near)
	}
	return usageError("config", "%s: %s", name, msg)
}

// checkSetting loads the configuration with name=value as if it came from
// the environment, so a value serve would refuse is refused now, with the
// same message.
func checkSetting(env *environment, name, value string) error {
	getenv := func(k string) string {
		if k == name {
			return value
		}
		return env.getenv(k)
	}
	if name == "MAILGATE_LOG_LEVEL" {
		_, err := newLogger(nil, value)
		return err
	}
	cwd, _ := env.workDir()
	fset := flag.NewFlagSet("config", flag.ContinueOnError)
	_, err := config.Load(fset, nil, getenv, cwd)
	var cerr *config.Error
	if errors.As(err, &cerr) && cerr.Var == name {
		return err
	}
	return nil
}

func showConfig(env *environment, cfg *config.Config) error {
	w := env.stdout
	how := "MAILGATE_HOME"
	if cfg.HomeIsDefault {
		how = "the default; set MAILGATE_HOME to use another folder"
	}
	fmt.Fprintf(w, "home      %s (%s)\n", cfg.Home, how)
	file, err := godotenv.Read(cfg.SettingsFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(w, "settings  %s (none yet: every setting has its default)\n", cfg.SettingsFile)
	case err != nil:
		return fmt.Errorf("reading %s: %w", cfg.SettingsFile, err)
	default:
		fmt.Fprintf(w, "settings  %s\n", cfg.SettingsFile)
		names := make([]string, 0, len(file))
		for k := range file {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			fmt.Fprintf(w, "          %s=%s\n", k, shownValue(k, file[k]))
		}
	}
	if cfg.EnvFile != "" && cfg.EnvFile != cfg.SettingsFile {
		fmt.Fprintf(w, "env file  %s (--env-file: read instead of the settings file)\n", cfg.EnvFile)
	}
	for _, v := range config.Vars {
		if val := env.getenv(v.Name); val != "" && v.Name != "MAILGATE_HOME" && file[v.Name] != val {
			fmt.Fprintf(w, "shell     %s=%s (this shell only: wins over the file here; servers started by clients do not see it)\n", v.Name, shownValue(v.Name, val))
		}
	}
	fmt.Fprintf(w, "in effect DEV_MODE=%t  SEND_LIMIT_PER_HOUR=%d  APPROVAL_MODE=%s  MAILGATE_TOOLS=%s\n",
		cfg.DevMode, cfg.SendLimit, cfg.ApprovalMode, strings.Join(cfg.Tools, ","))
	fmt.Fprintf(w, "          vault %s\n          store %s\n", cfg.VaultPath, shownValue("MAILGATE_DB", cfg.DB))
	return nil
}

const homeUsage = `Usage:
  mailgate home                         print the home (the folder every command and server uses)
  mailgate home --migrate-from DIR      move an older home's files (vault, token, audit log, store, .env) into it

Before mailgate used one home per user (~/.mailgate), the default home was the
working directory. --migrate-from moves such a folder's files into the home
(its .env only if it holds mailgate's settings alone), refusing if the same
file exists on both sides or a server still runs on either store. A clone of
the repository keeps its README files.
`

func homeCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("home", flag.ContinueOnError)
	from := fset.String("migrate-from", "", "move the files of the older home in `DIR` into this home")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	if fset.NArg() > 0 {
		return usageError("home", "unexpected argument %q: home takes no arguments (to move an older home in: --migrate-from DIR)", fset.Arg(0))
	}
	if *from == "" {
		fmt.Fprintln(env.stdout, cfg.Home)
		return nil
	}
	return migrateHome(ctx, env, cfg, *from)
}

// homeMove is one file or folder an older home's migration moves.
type homeMove struct{ from, to string }

// migrateHome moves what an older home in dir holds into cfg.Home: every
// entry of vault/ and audit/ but their README.md (a clone keeps its tracked
// files), the credentials and token, the store (.mailgate/state.db with its
// -wal and -shm) as state.db, and .env. Every conflict is found before
// anything moves; renames never cross file systems silently (a copy would
// leave two live stores).
func migrateHome(ctx context.Context, env *environment, cfg *config.Config, dir string) error {
	src, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	dst := cfg.Home
	if src == dst {
		return fmt.Errorf("%s is already the home", src)
	}
	if inside(src, dst) || inside(dst, src) {
		return fmt.Errorf("%s and the home %s are inside one another: move the files by hand", src, dst)
	}
	probe := &config.Config{Home: dst, HomeIsDefault: true}
	if len(probe.LegacyHome(src)) == 0 {
		return fmt.Errorf("%s holds no mailgate home files (vault requests, auth/token.json or credentials.json, .mailgate/state.db)", src)
	}
	var moves []homeMove
	for _, sub := range []string{"vault", "audit"} {
		entries, err := os.ReadDir(filepath.Join(src, sub))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, e := range entries {
			if e.Name() != "README.md" {
				moves = append(moves, homeMove{filepath.Join(sub, e.Name()), filepath.Join(sub, e.Name())})
			}
		}
	}
	for _, f := range []string{"credentials.json", "token.json"} {
		moves = append(moves, homeMove{filepath.Join("auth", f), filepath.Join("auth", f)})
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		moves = append(moves, homeMove{filepath.Join(".mailgate", "state.db"+suffix), "state.db" + suffix})
	}
	// The .env moves only when it is mailgate's alone: a project's .env
	// with other variables stays where it is.
	var notes []string
	if file, err := godotenv.Read(filepath.Join(src, ".env")); err == nil {
		own := true
		for k := range file {
			own = own && (config.Settable(k) || k == "MAILGATE_HOME")
		}
		if own {
			moves = append(moves, homeMove{".env", ".env"})
		} else {
			notes = append(notes, fmt.Sprintf("left %s in place: it holds variables that are not mailgate's; copy mailgate's settings with mailgate config set NAME VALUE", filepath.Join(src, ".env")))
		}
	}

	var todo []homeMove
	var conflicts []string
	for _, m := range moves {
		if _, err := os.Lstat(filepath.Join(src, m.from)); err != nil {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dst, m.to)); err == nil && !emptyDir(filepath.Join(dst, m.to), fi) {
			conflicts = append(conflicts, filepath.Join(dst, m.to))
		}
		todo = append(todo, m)
	}
	if len(todo) == 0 {
		return fmt.Errorf("%s holds no mailgate home files (vault requests, audit log, auth/token.json, .mailgate/state.db, .env)", src)
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("not moving anything: these already exist in the home: %s (move them away first, or keep the older home with MAILGATE_HOME=%s)",
			strings.Join(conflicts, ", "), src)
	}
	if err := refuseLiveServers(ctx, filepath.Join(src, ".mailgate", "state.db")); err != nil {
		return err
	}
	if err := refuseLiveServers(ctx, cfg.DB); err != nil {
		return err
	}
	if err := cfg.EnsureHome(); err != nil {
		return err
	}
	for _, m := range todo {
		to := filepath.Join(dst, m.to)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if fi, err := os.Lstat(to); err == nil && fi.IsDir() {
			os.Remove(to) // an empty folder a server created
		}
		if err := os.Rename(filepath.Join(src, m.from), to); err != nil {
			return fmt.Errorf("moving %s: %w (what is listed above was moved; move the rest by hand, on the same disk)", filepath.Join(src, m.from), err)
		}
		fmt.Fprintf(env.stdout, "moved %s → %s\n", filepath.Join(src, m.from), to)
	}
	// The old .env may name the old home; the home's own settings file
	// cannot point elsewhere, so the line goes.
	if file, err := godotenv.Read(filepath.Join(dst, ".env")); err == nil && file["MAILGATE_HOME"] != "" {
		if err := config.WriteSetting(filepath.Join(dst, ".env"), "MAILGATE_HOME", ""); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "removed MAILGATE_HOME=%s from %s\n", file["MAILGATE_HOME"], filepath.Join(dst, ".env"))
	}
	for _, n := range notes {
		fmt.Fprintln(env.stdout, n)
	}
	fmt.Fprintf(env.stdout, "Done: %s is the home. Run \"mailgate doctor\"; if a client's configuration sets MAILGATE_HOME=%s, remove it (mailgate claude-config prints the entry).\n", dst, src)
	return nil
}

// inside reports whether path is dir or inside it.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func emptyDir(path string, fi fs.FileInfo) bool {
	if !fi.IsDir() {
		return false
	}
	entries, err := os.ReadDir(path)
	return err == nil && len(entries) == 0
}

// settingInEffect is a setting's value as this command resolved it (flags,
// environment, settings file, default), printed as it would be written.
func settingInEffect(env *environment, cfg *config.Config, name string) (string, bool) {
	if v, ok := config.Value(cfg, name); ok {
		return v, true
	}
	// A variable not resolved above: the environment, else the settings
	// file, else its default.
	for _, v := range config.Vars {
		if v.Name != name {
			continue
		}
		if val := env.getenv(name); val != "" {
			return val, true
		}
		if file, err := godotenv.Read(cfg.SettingsFile); err == nil && file[name] != "" {
			return file[name], true
		}
		return v.DefaultText(), true
	}
	return "", false
}
