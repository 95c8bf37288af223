package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/editdist"
)

// commandHelp is each command's synopsis and what it does, printed above
// its own flags by -h. Every command also accepts the configuration flags
// (config.Load registers them on every flag set), but only serve lists
// them: the help of auth is about signing in, not about twenty settings.
var commandHelp = map[string]string{
	"approvals": approvalsUsage,
	"config":    configUsage,
	"home":      homeUsage,
	"mailbox":   mailboxUsage,
	"serve": `Usage: mailgate serve [--sandbox] [--http [ADDR]] [configuration flags]

Serve the MCP tools over stdio (what Claude Desktop and other clients start),
or with --http over Streamable HTTP (and legacy SSE) for many agents at once.
Email tools need "mailgate auth" first; until then they say so, and the
agent-mail tools work meanwhile.
`,
	"auth": `Usage: mailgate auth [flags]

Sign in to Gmail in the browser (OAuth with PKCE, on a loopback address) and
save the token in the home (auth/token.json, mode 0600). With --account NAME,
add another Gmail account (or sign it in again): its token is saved as
auth/accounts/NAME.json, and the email tools use it when called with
account NAME; the first token is the account "default".
`,
	"doctor": `Usage: mailgate doctor [--strict] [--live]

Check the configuration, files, token and store; one fix per problem.
With --live, also ask the real account what mailgate relies on (profile,
labels, a search, a thread, an attachment read twice, the scopes), writing
one draft to yourself that it reads back and deletes; it never sends.
Exit status 1 when a check fails (or, with --strict, warns).
`,
	"claude-config": `Usage: mailgate claude-config [--install] [--client NAME] [--tools SETS] [--sandbox] [--name NAME]

Print the MCP client entry that starts mailgate serve, or with --install write
it into the client's configuration file (merged with the servers already
there, after a timestamped backup). Any configuration flag of "mailgate serve
-h" given here (such as --dev-mode=false) is saved in the home's settings file,
but --tools SETS, which goes into the entry's args: the tool sets are the
client's choice (default for Claude Desktop: email; for the others: the home's
MAILGATE_TOOLS).
`,
	"demo": `Usage: mailgate demo [--keep]

Walk through search, read, draft, send and reply on the built-in sandbox mailbox, as an agent and
as the human approver, in a throwaway home (deleted at the end unless --keep).
`,
	"agents-snippet": `Usage: mailgate agents-snippet [--project DIR]

Print the lines a project puts in its AGENTS.md or CLAUDE.md so that every
coding agent registers, checks its inbox, and reserves files before editing.
`,
	"watch": `Usage: mailgate watch [--project KEY] [--once] [--interval D] [--limit N]

Show agent-mail traffic as it happens: who wrote to whom, in which project and
thread, with the live file reservations. Ctrl-C ends it.
`,
}

// ownConfigFlags are the configuration flags a command's help lists among
// its own, because they mean something particular there (claude-config's
// --tools goes into the client's entry, not into the settings file).
var ownConfigFlags = map[string][]string{"claude-config": {"tools"}}

// printHelp prints fs's command help: its synopsis, its own flags with
// their defaults and, for serve, the configuration flags with the variable
// each sets and its default.
func printHelp(fs *flag.FlagSet, w io.Writer) {
	if h, ok := commandHelp[fs.Name()]; ok {
		fmt.Fprint(w, h)
	} else {
		fmt.Fprintf(w, "Usage: mailgate %s [flags]\n", fs.Name())
	}
	vars := map[string]config.Var{}
	for _, v := range config.Vars {
		if v.Flag != "" {
			vars[v.Flag] = v
		}
	}
	var own, common []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		switch _, isVar := vars[f.Name]; {
		case slices.Contains(ownConfigFlags[fs.Name()], f.Name):
			own = append(own, f)
		case isVar || f.Name == "env-file":
			common = append(common, f)
		default:
			own = append(own, f)
		}
	})
	if len(own) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		for _, f := range own {
			printFlag(w, f, f.DefValue, "")
		}
	}
	if fs.Name() == "config" {
		printSettings(w)
	}
	if fs.Name() != "serve" {
		fmt.Fprintln(w, "\nEvery command reads the home ($MAILGATE_HOME, default ~/.mailgate) and its settings file;")
		fmt.Fprintln(w, "--home DIR and --env-file FILE override them. Configuration flags: mailgate serve -h")
		return
	}
	fmt.Fprintln(w, "\nConfiguration flags (each also an environment variable or a line of the home's settings file,")
	fmt.Fprintln(w, "$MAILGATE_HOME/.env, which \"mailgate config set\" writes; a flag wins over both):")
	for _, f := range common {
		if v, ok := vars[f.Name]; ok {
			printFlag(w, f, v.DefaultText(), v.Name)
		} else {
			printFlag(w, f, "", "")
		}
	}
}

// printSettings lists every setting of the configuration contract by
// section, with its default: what "mailgate config set" takes.
func printSettings(w io.Writer) {
	fmt.Fprint(w, "\nSettings (what each does: its flag in mailgate serve -h):")
	var section config.Section
	for _, v := range config.Vars {
		if v.Section != section {
			section = v.Section
			fmt.Fprintf(w, "\n  %s\n", section)
		}
		fmt.Fprintf(w, "    %-28s default %s\n", v.Name, v.DefaultText())
	}
}

// printFlag prints one flag as "--name VALUE" with its usage, default and
// variable. The usage of a configuration flag ends with its variable in
// parentheses (config.Load); that is said once, here.
func printFlag(w io.Writer, f *flag.Flag, def, envVar string) {
	name, usage := flag.UnquoteUsage(f)
	head := "  --" + f.Name
	switch name {
	case "":
	case "string":
		head += " VALUE"
	case "int":
		head += " N"
	default:
		head += " " + strings.ToUpper(name)
	}
	if envVar != "" {
		usage = strings.TrimSuffix(usage, " ("+envVar+")")
	}
	var extra []string
	if def != "" && def != "false" && def != "0" {
		extra = append(extra, "default "+def)
	}
	if envVar != "" {
		extra = append(extra, envVar)
	}
	if len(extra) > 0 {
		usage += " [" + strings.Join(extra, "; ") + "]"
	}
	fmt.Fprintf(w, "%s\n      %s\n", head, usage)
}

// flagError is a command line that does not parse: a usage error (exit
// status 2), printed with the way to the command's help.
type flagError struct {
	cmd string
	err error
}

func (e *flagError) Error() string {
	msg := e.err.Error()
	var cerr *config.Error
	if errors.As(e.err, &cerr) {
		msg = cerr.Msg
	}
	return fmt.Sprintf("%s: %s (see mailgate %s -h)", e.cmd, msg, e.cmd)
}

func (e *flagError) Unwrap() []error { return []error{e.err, errUsage} }

// usageError reports stray arguments the same way.
func usageError(cmd, format string, a ...any) error {
	return &flagError{cmd: cmd, err: fmt.Errorf(format, a...)}
}

// helpOrError prints the command's help for -h (and returns nil: asked-for
// help is a success, on stdout) and turns a flag that does not parse into
// a usage error; other errors pass through.
func helpOrError(fset *flag.FlagSet, err error, stdout io.Writer) error {
	if errors.Is(err, flag.ErrHelp) {
		printHelp(fset, stdout)
		return nil
	}
	if errors.Is(err, config.ErrBadFlag) {
		return &flagError{cmd: fset.Name(), err: err}
	}
	return err
}

// nearest is the candidate a mistyped name most likely meant ("" when none
// is close): the same letters but for case, "_" and "-" (DEVMODE, dev-mode:
// DEV_MODE), else one that begins with it (SEND_LIMIT: SEND_LIMIT_PER_HOUR),
// else the one within an edit distance of a third of its length.
func nearest(name string, candidates []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToUpper(s))
	}
	n := norm(name)
	best, bestD := "", 0
	for _, c := range candidates {
		d := editdist.Levenshtein(n, norm(c))
		if d == 0 {
			return c
		}
		if len(n) >= 4 && strings.HasPrefix(norm(c), n) {
			d = 1
		}
		if d <= max(1, len(c)/3) && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// isHelpFlag reports -h, -help and --help, which every command answers with
// its help, even one that takes no flags.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}
