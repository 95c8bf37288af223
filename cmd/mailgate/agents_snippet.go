package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/mailgate/mailgate/internal/gitrepo"
)

// agentsSnippet is the text a project puts in its AGENTS.md or CLAUDE.md:
// agents follow their rules file, not the server's instructions, which many
// clients shorten or drop. It names the tools and their arguments exactly,
// so an agent can act on it without guessing, and the project key, so
// every agent of the project lands in one project whichever folder of it
// its client was started in. %[1]s is the project's absolute path, %[2]s the
// same URL-encoded (for a resource URI).
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

5. **Be woken when mail arrives** instead of polling: if your client supports resource
   subscriptions, subscribe to ` + "`resource://inbox/<your name>?project=%[2]s`" + ` and read it
   again when notified. Otherwise a hook can do it: ` + "`mailgate watch --project \"%[1]s\" --agent <your name> --exec 'CMD'`" + `
   runs CMD for each message you receive (the message is in ` + "`$MAILGATE_MESSAGE_ID`" + `,
   ` + "`$MAILGATE_FROM`" + `, ` + "`$MAILGATE_SUBJECT`" + `; quote them).

A human can follow the traffic with ` + "`mailgate watch`" + `.
`

// agentsSnippetCmd prints agentsSnippet for the project in --project (by
// default the working directory, the usual place to run it: the root of
// the repository whose AGENTS.md it goes into).
func agentsSnippetCmd(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("agents-snippet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	project := fs.String("project", "", "the project's root folder `DIR`, its key for every agent (default: the git top level of the working directory, else the working directory)")
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
	// With no --project, the working directory's project key by the one
	// rule the servers and `mailgate mailbox` use (its git top level, else
	// itself): run from a subfolder, the snippet still names the repository.
	dir, err := gitrepo.ProjectKey(ctx, "")
	if *project != "" {
		dir, err = filepath.Abs(*project)
	}
	if err != nil {
		return err
	}
	if strings.ContainsAny(dir, "`\"\n") {
		return fmt.Errorf("the project folder %q holds a quote or a line break: give --project a plain path", dir)
	}
	_, err = fmt.Fprintf(env.stdout, agentsSnippet, dir, url.QueryEscape(dir))
	if err == nil {
		fmt.Fprintln(env.stderr, "Paste this into the project's AGENTS.md (Codex, Gemini CLI, …) or CLAUDE.md (Claude Code),")
		fmt.Fprintln(env.stderr, "e.g. mailgate agents-snippet >> AGENTS.md. Each agent's client needs the mailgate server:")
		fmt.Fprintln(env.stderr, "mailgate claude-config --client claude-code --install (or --client codex).")
	}
	return err
}
