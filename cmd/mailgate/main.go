// Command mailgate serves email and agent-mail tools to AI agents over MCP.
//
// Everything it prints for people goes to stderr: stdout carries the MCP
// protocol when serving over stdio.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	// Initialised before the libraries: a serve process starts with a
	// raised collector target (see the package).
	_ "github.com/mailgate/mailgate/internal/startgc"
)

// version is set at build time (-ldflags "-X main.version=…"); otherwise the
// module version recorded by the go command is used.
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &environment{
		args: os.Args[1:], getenv: os.Getenv,
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
	}
	err := run(ctx, env)
	stop()
	os.Exit(exitCode(err, env.stderr))
}

// environment is what a run sees of the process, so tests can run commands
// in-process with their own streams and variables.
type environment struct {
	args   []string
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	dir    string // the working directory; "" is the process's
}

// workDir is the run's working directory: env.dir, else the process's.
func (env *environment) workDir() (string, error) {
	if env.dir != "" {
		return env.dir, nil
	}
	return os.Getwd()
}

const usage = `mailgate: email and agent-mail tools for AI agents, over MCP

Usage:
  mailgate serve [--sandbox] [flags]   serve MCP over stdio (Claude Desktop runs this)
  mailgate serve --http [ADDR]         serve MCP over Streamable HTTP (and legacy SSE) for many agents
  mailgate auth                        sign in to Gmail (OAuth in the browser) and save the token
  mailgate doctor [--live]             check the configuration, files, token and store; one fix per problem
  mailgate claude-config [--install]   print, or write into the client's config, the entry that starts mailgate
  mailgate approvals [show|approve|reject ID]  list, show or decide approval requests from the terminal
  mailgate approvals --web [--no-open] the approval page in the browser: see each email as it is sent, decide
  mailgate mailbox send|receive|status|recipients|import  the four-tool agent-mail CLI on mailgate's store
  mailgate config [set NAME VALUE | unset NAME]  show or change the home's settings (DEV_MODE, …)
  mailgate home [--migrate-from DIR]   show the home, or move an older home (a folder used before) into it
  mailgate agents-snippet              print the lines for a project's AGENTS.md / CLAUDE.md (agent teams)
  mailgate watch [--once]              follow agent-mail traffic and file reservations in the terminal
  mailgate guard install|uninstall     the git pre-commit hook refusing commits to files another agent holds
  mailgate demo [--keep]               walk through the email tools on the sandbox mailbox
  mailgate version, --version          print the version

Every command and every agent's server uses one home, $MAILGATE_HOME or by
default ~/.mailgate, and reads its settings file ~/.mailgate/.env.
"mailgate COMMAND -h" shows a command's flags and their defaults; every
configuration flag (mailgate serve -h) also has an environment variable.
Exit status: 0 done, 1 failed, 2 the command line was wrong.
`

func run(ctx context.Context, env *environment) error {
	if len(env.args) == 0 {
		fmt.Fprint(env.stderr, usage)
		return errUsage
	}
	cmd, args := env.args[0], env.args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, env, args)
	case "demo":
		return demo(ctx, env, args)
	case "auth":
		return authCmd(ctx, env, args)
	case "doctor":
		return doctorCmd(ctx, env, args)
	case "approvals":
		return approvalsCmd(ctx, env, args)
	case "mailbox":
		return mailboxCmd(ctx, env, args)
	case "claude-config":
		return claudeConfigCmd(ctx, env, args)
	case "config":
		return configCmd(ctx, env, args)
	case "home":
		return homeCmd(ctx, env, args)
	case "agents-snippet":
		return agentsSnippetCmd(ctx, env, args)
	case "watch":
		return watchCmd(ctx, env, args)
	case "guard":
		return guardCmd(ctx, env, args)
	case "version", "--version", "-version":
		if len(args) > 0 && isHelpFlag(args[0]) {
			fmt.Fprint(env.stdout, "Usage: mailgate version\n\nPrint mailgate's version (also: mailgate --version).\n")
			return nil
		}
		if len(args) > 0 {
			return usageError("version", "unexpected argument %q: version takes no arguments", args[0])
		}
		fmt.Fprintln(env.stdout, "mailgate", versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(env.stdout, usage)
		return nil
	default:
		hint := ""
		if near := nearest(cmd, commands); near != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", near)
		}
		fmt.Fprintf(env.stderr, "mailgate: unknown command %q%s; the commands are below (mailgate COMMAND -h for one)\n\n%s", cmd, hint, usage)
		return errUsage
	}
}

var errUsage = errors.New("usage")

// commands are run's commands, for the suggestion of an unknown one.
var commands = []string{"serve", "demo", "auth", "doctor", "approvals", "mailbox", "claude-config",
	"config", "home", "agents-snippet", "watch", "guard", "version", "help"}

// exitCode prints err as one line on stderr and picks the exit status.
func exitCode(err error, stderr io.Writer) int {
	var status exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(*flagError)):
		fmt.Fprintln(stderr, "mailgate", err)
		return 2
	case errors.As(err, &status): // already reported by the command
		return int(status)
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errDoctorProblems):
		return 1 // the report on stdout already ends with the summary
	case errors.Is(err, context.Canceled):
		return 0
	default:
		fmt.Fprintln(stderr, "mailgate:", err)
		return 1
	}
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
