package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/doctor"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
)

// errDoctorProblems ends a doctor run that found problems: exit status 1, after
// the report on stdout.
var errDoctorProblems = errors.New("doctor found problems")

// doctorCmd checks the installation with the configuration serve would use
// and prints one line per check to stdout (a human command: nothing here
// ever runs under an MCP client). Exit status 0 means no FAIL line;
// warnings (things that work but are risky) keep it 0 unless --strict.
func doctorCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("doctor", flag.ContinueOnError)
	strict := fset.Bool("strict", false, "exit with status 1 on warnings too")
	live := fset.Bool("live", false, "also ask the real account what mailgate relies on: read calls and one draft to yourself, deleted at once; never sends")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		if herr := helpOrError(fset, err, env.stdout); herr == nil || errors.Is(herr, errUsage) {
			return herr
		}
		doctor.Write(env.stdout, "the configuration does not load", []doctor.Check{doctor.ConfigError(err)})
		return fmt.Errorf("%w: 1 problem", errDoctorProblems)
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(env.stderr, "mailgate doctor: unexpected argument %q\n", fset.Arg(0))
		return errUsage
	}
	checks := doctor.Run(ctx, cfg, doctor.Options{
		Scopes: neededScopes(cfg), ToolsLeftOut: toolsLeftOut(cfg), Migrate: serveMigrations(cfg),
		ClientConfigs: clientConfigFiles(env.getenv), UserHome: userHomeDir(env.getenv), Live: *live,
		BadProjects: badProjects(cfg),
	})
	doctor.Write(env.stdout, cfg.Home, checks)
	fails, warns := doctor.Counts(checks)
	if fails > 0 || (*strict && warns > 0) {
		return fmt.Errorf("%w: %d failed, %d warning(s)", errDoctorProblems, fails, warns) // not printed: the report says it
	}
	return nil
}

// clientConfigFiles are the MCP clients' configuration files doctor reads
// for filesystem servers and project folders that could expose the vault.
func clientConfigFiles(getenv func(string) string) []doctor.ClientConfig {
	desktop, _ := claudeDesktopPaths(runtime.GOOS, getenv)
	home := userHomeDir(getenv)
	return []doctor.ClientConfig{
		{Client: "Claude Desktop", Path: desktop},
		{Client: "Claude Code", Path: filepath.Join(home, ".claude.json")},
		{Client: "Cursor", Path: filepath.Join(home, ".cursor", "mcp.json")},
		{Client: "Gemini CLI", Path: filepath.Join(home, ".gemini", "settings.json")},
		{Client: "Windsurf", Path: filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")},
	}
}

// userHomeDir is the user's home folder as this environment names it.
func userHomeDir(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	if h := getenv("USERPROFILE"); h != "" && runtime.GOOS == "windows" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// serveMigrations applies the schema migrations serve applies for cfg (see
// open in serve.go), so that doctor proves the store will open.
func serveMigrations(cfg *config.Config) func(context.Context, *store.DB) error {
	return func(ctx context.Context, db *store.DB) error {
		if cfg.HasTools(config.ToolsEmail) {
			// The limit itself is checked when serve starts; here only
			// the schema matters.
			if _, err := ratelimit.New(ctx, db, max(cfg.SendLimit, 1), time.Hour); err != nil {
				return err
			}
		}
		if cfg.HasTools(config.ToolsAgentMail) {
			st, err := amstore.Open(ctx, db)
			if err != nil {
				return err
			}
			return st.Close()
		}
		return nil
	}
}

// badProjects lists the store's agent-mail projects whose folder no project
// may be (agentmail.ProjectKeyProblem), as "key (reason)".
func badProjects(cfg *config.Config) func(context.Context, *store.DB) ([]string, error) {
	return func(ctx context.Context, db *store.DB) ([]string, error) {
		st, err := amstore.Open(ctx, db)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		var ps []agentmail.Project
		if err := st.Read(ctx, func(tx agentmail.Tx) (err error) {
			ps, err = tx.Projects(ctx)
			return err
		}); err != nil {
			return nil, err
		}
		var bad []string
		for _, p := range ps {
			if problem := agentmail.ProjectKeyProblem(p.HumanKey, protectedPaths(cfg)); problem != "" {
				bad = append(bad, fmt.Sprintf("%s (%s)", p.HumanKey, problem))
			}
		}
		return bad, nil
	}
}
