package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// agentsSnippet is the text a project puts in its AGENTS.md or CLAUDE.md:
// agents follow their rules file, not the server's instructions, which many
// clients shorten or drop. It names the tools and their arguments exactly,
// so an agent can act on it without guessing, and the project key, so
// every agent of the project lands in one project whichever folder of it
// its client was started in. %[1]s is the project's absolute path.
const agentsSnippet = `## Working with other agents (mailgate agent mail)

Several coding agents work in this repository at once. They coordinate through the
mailgate MCP server's agent-mail tools; the project key is ` + "`%[1]s`" + `.

1. **Start of a session**: call ` + "`macro_start_session`" + ` with ` + "`human_key: \"%[1]s\"`" + `,
   ` + "`program`" + ` and ` + "`model`" + ` (or ` + "`ensure_project`" + ` then ` + "`register_agent`" + ` with
   ` + "`project_key: \"%[1]s\"`" + `). Remember the agent name you are given (e.g. GreenCastle):
   it is your ` + "`sender_name`" + ` / ` + "`agent_name`" + ` from then on.
2. **Check your inbox** with ` + "`fetch_inbox`" + ` at the start of each task and before you
   finish; answer with ` + "`reply_message`" + ` and ` + "`acknowledge_message`" + ` what asks for it.
3. **Reserve files before editing them**: ` + "`file_reservation_paths`" + ` with the paths or globs
   you will change (e.g. ` + "`[\"src/auth/**\"]`" + `), a ` + "`reason`" + ` and ` + "`ttl_seconds`" + `. If the answer
   lists conflicts, do not edit those files: message their holder with ` + "`send_message`" + `
   and work on something else meanwhile.
4. **Release when done**: ` + "`release_file_reservations`" + ` as soon as your change is committed
   (` + "`renew_file_reservations`" + ` if you need longer). Tell the others what changed with
   ` + "`send_message`" + ` (` + "`to`" + `: their names, or a shared ` + "`thread_id`" + ` such as the ticket id).

A human can follow the traffic with ` + "`mailgate watch`" + `.
`

// agentsSnippetCmd prints agentsSnippet for the project in --project (by
// default the working directory, the usual place to run it: the root of
// the repository whose AGENTS.md it goes into).
func agentsSnippetCmd(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("agents-snippet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	project := fs.String("project", "", "the project's root folder `DIR`, its key for every agent (default: the working directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs, env.stdout)
			return nil
		}
		return &flagError{cmd: "agents-snippet", err: err}
	}
	if fs.NArg() > 0 {
		return usageError("agents-snippet", "unexpected argument %q", fs.Arg(0))
	}
	dir := *project
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if strings.ContainsAny(dir, "`\"\n") {
		return fmt.Errorf("the project folder %q holds a quote or a line break: give --project a plain path", dir)
	}
	_, err = fmt.Fprintf(env.stdout, agentsSnippet, dir)
	if err == nil {
		fmt.Fprintln(env.stderr, "Paste this into the project's AGENTS.md (Codex, Gemini CLI, …) or CLAUDE.md (Claude Code),")
		fmt.Fprintln(env.stderr, "e.g. mailgate agents-snippet >> AGENTS.md. Each agent's client needs the mailgate server:")
		fmt.Fprintln(env.stderr, "mailgate claude-config --client claude-code --install (or --client codex).")
	}
	return err
}
