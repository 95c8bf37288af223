package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demo walks a newcomer through the email tools an agent uses most (search, read, draft, send
// and reply, both through the approval gate) over the real protocol: it
// starts `mailgate serve --sandbox` as a subprocess in a throwaway home, acts
// as the agent (an MCP client) and as the human approver (moving the request
// file), and prints each step.
func demo(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	keep := fs.Bool("keep", false, "keep the throwaway home (vault, audit log, store) for a look afterwards")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(fs, env.stdout)
			return nil
		}
		return &flagError{cmd: "demo", err: err}
	}
	if fs.NArg() > 0 {
		return usageError("demo", "unexpected argument %q", fs.Arg(0))
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the mailgate binary: %w", err)
	}
	home, err := os.MkdirTemp("", "mailgate-demo-")
	if err != nil {
		return fmt.Errorf("creating the demo home: %w", err)
	}
	if !*keep {
		defer os.RemoveAll(home)
	}
	w := env.stdout
	step := 0
	say := func(format string, a ...any) {
		step++
		fmt.Fprintf(w, "\n== %d. %s\n", step, fmt.Sprintf(format, a...))
	}

	cmd := exec.CommandContext(ctx, self, "serve", "--sandbox", "--log-level", "warn")
	cmd.Env = append(os.Environ(),
		// No DEV_MODE: whatever the user's shell says, the sandbox delivers
		// approved mail into its own Sent folder; nothing leaves this machine.
		"MAILGATE_HOME="+home,
		"MAILGATE_TOOLS=email",
		"SEND_LIMIT_PER_HOUR=10",
	)
	cmd.Stderr = env.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mailgate-demo", Version: versionString()}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("starting mailgate serve --sandbox: %w", err)
	}
	defer cs.Close()

	fmt.Fprintf(w, "mailgate demo: an agent (this program, an MCP client) talks to `mailgate serve --sandbox`\n")
	fmt.Fprintf(w, "over stdio. The sandbox is a local Gmail server with a seeded mailbox: no Google account,\nnothing leaves this machine, and approved mail is delivered into it whatever DEV_MODE says.\n")
	if *keep {
		fmt.Fprintf(w, "Its home (vault, audit log, store, the sandbox mailbox): %s, kept afterwards (--keep).\n", home)
	} else {
		fmt.Fprintf(w, "Its home (vault, audit log, store, the sandbox mailbox): %s, a throwaway one, deleted at the end\n(mailgate demo --keep keeps it for a look). Your own home, ~/.mailgate, is not touched.\n", home)
	}

	say("tools/list: the tools an agent sees")
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   %-13s %s\n", tool.Name, firstSentence(tool.Description))
	}

	call := func(name string, args map[string]any) (string, bool, error) {
		fmt.Fprintf(w, "   → %s %s\n", name, compactArgs(args))
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", false, fmt.Errorf("calling %s: %w", name, err)
		}
		text := ""
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text += t.Text
			}
		}
		fmt.Fprintln(w, indent(text, "   "))
		return text, res.IsError, nil
	}

	say("search_email: the agent looks for an invoice")
	text, _, err := call("search_email", map[string]any{"query": "invoice", "max_results": 3})
	if err != nil {
		return err
	}
	msgID := firstMatch(text, `Message ID: (\S+)`)
	threadID := firstMatch(text, `Thread ID: (\S+)`)
	if msgID == "" || threadID == "" {
		return errors.New("demo: the sandbox search found no invoice")
	}

	say("read_email: it reads the message (bodies are fenced as untrusted content)")
	if _, _, err := call("read_email", map[string]any{"message_id": msgID}); err != nil {
		return err
	}

	say("draft_email: a draft goes straight to Gmail's Drafts; nothing is sent")
	if _, _, err := call("draft_email", map[string]any{"to": "alice@example.com", "subject": "Invoice #1234", "body": "Hi Alice,\n\nThanks, the invoice is received and will be paid this week.\n\nBest"}); err != nil {
		return err
	}

	// The receipt goes as an attachment: files are sent only from the
	// attachment folder (ATTACHMENTS_DIR, by default the home's
	// attachments/), each bound by the approval by name, size and SHA-256.
	attachDir := filepath.Join(home, "attachments")
	if err := os.MkdirAll(attachDir, 0o700); err != nil {
		return fmt.Errorf("demo: creating the attachment folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(attachDir, "receipt-1234.txt"), []byte("Receipt for invoice #1234\nAmount: 1,200 EUR\nPaid: by bank transfer\n"), 0o600); err != nil {
		return fmt.Errorf("demo: writing the attachment: %w", err)
	}
	send := map[string]any{"to": "alice@example.com", "cc": []any{"bob@example.org"}, "subject": "Invoice #1234 paid",
		"body": "Hi Alice,\n\nInvoice #1234 was paid today; the receipt is attached.\n\nBest", "attachments": []any{"receipt-1234.txt"}}
	say("send_email with a cc and an attachment (from %s): the first call is refused, and a request file listing every recipient and the file is written for the human", attachDir)
	text, _, err = call("send_email", send)
	if err != nil {
		return err
	}
	name := firstMatch(text, `Pending_Approval/(\S+\.md)`)
	if name == "" {
		return errors.New("demo: the refusal named no request file")
	}
	pending := filepath.Join(home, "vault", "Pending_Approval", name)
	body, err := os.ReadFile(pending)
	if err != nil {
		return fmt.Errorf("demo: reading the request file: %w", err)
	}
	fmt.Fprintf(w, "   The request file %s:\n%s\n", pending, indent(string(body), "   | "))

	say("the human reads it: mailgate approvals show (recipient, subject, warnings, the body with hidden characters made visible)")
	fmt.Fprintf(w, "   $ mailgate approvals show %s\n", strings.TrimSuffix(name, ".md"))
	show := exec.CommandContext(ctx, self, "approvals", "show", name)
	show.Env = append(os.Environ(), "MAILGATE_HOME="+home)
	out, err := show.CombinedOutput()
	if err != nil {
		return fmt.Errorf("demo: mailgate approvals show: %v: %s", err, out)
	}
	fmt.Fprintln(w, indent(string(out), "   "))

	say("the human approves: they move the file to Approved/ (that move is the approval; `mailgate approvals approve ID` does the same after asking)")
	approved := filepath.Join(home, "vault", "Approved", name)
	if err := os.Rename(pending, approved); err != nil {
		return fmt.Errorf("demo: approving: %w", err)
	}
	fmt.Fprintf(w, "   mv vault/Pending_Approval/%s vault/Approved/\n", name)
	fmt.Fprintf(w, "   (A third way: the local approval page shows the email as the recipient will see it, and approves,\n"+
		"   corrects or rejects with a click: MAILGATE_HOME=%s mailgate approvals --web; run with --keep to try it afterwards.)\n", home)

	say("send_email again, same arguments: sent once (to Alice, cc Bob, the receipt attached), and the approval is filed in Done/")
	if text, isErr, err := call("send_email", send); err != nil {
		return err
	} else if isErr {
		return fmt.Errorf("demo: the approved send failed: %s", text)
	}
	// Done/ names are the request's name plus a unique suffix, so a later
	// approval of the same content never collides with this one.
	matches, _ := filepath.Glob(filepath.Join(home, "vault", "Done", strings.TrimSuffix(name, ".md")+"*.md"))
	if len(matches) != 1 {
		return fmt.Errorf("demo: want one Done/ file for %s, found %d", name, len(matches))
	}
	done, err := os.ReadFile(matches[0])
	if err != nil {
		return fmt.Errorf("demo: reading the Done/ file: %w", err)
	}
	fmt.Fprintf(w, "   vault/Done/%s now records the outcome:\n%s\n", filepath.Base(matches[0]), indent(frontmatterOf(string(done)), "   | "))

	say("send_email a third time: the email was already sent, and the agent is told so; a new request would be a marked repeat")
	if _, _, err := call("send_email", send); err != nil {
		return err
	}

	reply := map[string]any{"thread_id": threadID, "message_id": msgID, "body": "Hello,\n\nThanks for confirming the payment.\n\nBest"}
	say("reply_email: a reply in the receipt's thread goes through the same gate: refused first, a request file is written")
	text, _, err = call("reply_email", reply)
	if err != nil {
		return err
	}
	replyName := firstMatch(text, `Pending_Approval/(\S+\.md)`)
	if replyName == "" {
		return errors.New("demo: the reply's refusal named no request file")
	}

	say("the human approves it from a terminal this time: mailgate approvals approve (it shows the email and asks; --yes is for scripts)")
	id := strings.TrimSuffix(replyName, ".md")
	fmt.Fprintf(w, "   $ mailgate approvals approve --yes %s\n", id)
	approve := exec.CommandContext(ctx, self, "approvals", "approve", "--yes", id)
	approve.Env = append(os.Environ(), "MAILGATE_HOME="+home)
	if out, err = approve.CombinedOutput(); err != nil {
		return fmt.Errorf("demo: mailgate approvals approve: %v: %s", err, out)
	}
	fmt.Fprintln(w, indent(string(out), "   "))

	say("reply_email again, same arguments: sent once into the thread (In-Reply-To and References from the message, \"Re:\" once)")
	if text, isErr, err := call("reply_email", reply); err != nil {
		return err
	} else if isErr {
		return fmt.Errorf("demo: the approved reply failed: %s", text)
	}

	say("search_email in:sent: the sent mail is in the sandbox mailbox's Sent folder")
	if _, _, err := call("search_email", map[string]any{"query": "in:sent paid", "max_results": 5}); err != nil {
		return err
	}

	say("the audit log: one line per call and per gate decision (no bodies, masked addresses)")
	if err := printAudit(w, filepath.Join(home, "audit")); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nDone: the email path an agent walks most (search_email, read_email, draft_email, send_email with a cc and an attachment, reply_email); README lists every tool.\n")
	if *keep {
		fmt.Fprintf(w, "The demo home is kept at %s: open vault/ (Done/ holds both approvals), audit/, or run\n  MAILGATE_HOME=%s mailgate approvals\n", home, home)
		fmt.Fprintf(w, "or the approval page (the list, what was sent, new requests live):\n  MAILGATE_HOME=%s mailgate approvals --web\n", home)
	} else {
		fmt.Fprintf(w, "The demo home %s is deleted now; run mailgate demo --keep to keep it for a look.\n", home)
	}
	fmt.Fprintf(w, "Next: connect your own mailbox (mailgate auth, then mailgate claude-config --install): README.md.\n")
	return nil
}

func printAudit(w io.Writer, dir string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fmt.Fprintf(w, "   %s\n", sc.Text())
		}
		fh.Close()
	}
	return nil
}

func firstMatch(s, pattern string) string {
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if len(m) < 2 {
		return ""
	}
	return strings.TrimRight(m[1], ".,:")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func compactArgs(args map[string]any) string {
	var parts []string
	for _, k := range []string{"query", "max_results", "message_id", "thread_id", "to", "cc", "bcc", "subject", "attachments"} {
		if v, ok := args[k]; ok {
			if list, ok := v.([]any); ok {
				b, _ := json.Marshal(list)
				parts = append(parts, k+"="+string(b))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s=%q", k, fmt.Sprint(v)))
		}
	}
	if _, ok := args["body"]; ok {
		parts = append(parts, "body=…")
	}
	return strings.Join(parts, " ")
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func frontmatterOf(doc string) string {
	doc = strings.ReplaceAll(doc, "\r\n", "\n")
	if !strings.HasPrefix(doc, "---\n") {
		return doc
	}
	if end := strings.Index(doc[4:], "\n---"); end >= 0 {
		return doc[:4+end+4]
	}
	return doc
}
