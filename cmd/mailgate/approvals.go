package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/mail"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/warnings"
)

const approvalsUsage = `Usage:
  mailgate approvals                   list pending, approved, rejected and done requests
  mailgate approvals show ID           show one request as it will be sent: recipient, subject,
                                       warnings, and the body with hidden characters made visible
  mailgate approvals approve [--yes] ID
                                       show the request, ask for confirmation, and move it to
                                       Approved/ (--yes: no question, for scripts)
  mailgate approvals reject ID         move a pending (or approved, unused) request to Rejected/
  mailgate approvals cancel ID         withdraw an approved email scheduled for later (send_at)
                                       before its time: it is never sent, its file goes to Rejected/
  mailgate approvals --web [--no-open] the local approval page: each request as the recipient will
                                       see it (the HTML part too), approve, correct or reject with a
                                       reason; prints its one-time address and opens the browser

ID is the name shown in the list, the request_id, or any unique start of either
(or of the 32-hex id at the end of the name). Configuration flags (--vault,
--home, …) go before the subcommand.
`

// approvalsCmd lists the vault or decides one request, for people who
// prefer a terminal to a file manager. A decision is the same move a file
// manager makes, so the gate needs nothing else. It is deliberately not an
// MCP tool: an agent must never approve its own email.
func approvalsCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("approvals", flag.ContinueOnError)
	// --web and --no-open may come before the configuration flags too.
	args, web, noOpen := approvalsWebArgs(args)
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	// The ledger, the schedule, the live servers… share one opening of the
	// store (storeonce.go).
	ctx, closeStores := withStoreSet(ctx)
	defer closeStores()
	ledger, closeLedger := openLedger(ctx, cfg) // approvals_settle.go
	defer closeLedger()
	v, err := approval.Open(cfg.VaultPath, approval.Options{Mode: approval.Mode(cfg.ApprovalMode), TTL: cfg.ApprovalTTL, Ledger: ledger})
	if err != nil {
		return fmt.Errorf("VAULT_PATH %s: %w", cfg.VaultPath, err)
	}
	rest, yes := approvalsArgs(fset.Args())
	rest, web2, noOpen2 := approvalsWebArgs(rest)
	web, noOpen = web || web2, noOpen || noOpen2
	if slices.ContainsFunc(rest, isHelpFlag) { // approvals show -h: the help, not an ID "-h"
		printHelp(fset, env.stdout)
		return nil
	}
	verb := "list"
	if len(rest) > 0 {
		verb = rest[0]
	}
	switch {
	case web && len(rest) == 0:
		return approvalsWeb(ctx, env, cfg, v, noOpen) // approvals_web.go
	case web:
		return usageError("approvals", "--web takes no subcommand (unexpected %q)", rest[0])
	case noOpen:
		return usageError("approvals", "--no-open goes with --web")
	case verb == "list" && len(rest) <= 1:
		settleForListing(ctx, env.stdout, cfg, v) // approvals_settle.go
		items, err := v.List()
		if err != nil {
			return err
		}
		markDead(ctx, cfg, v, items)
		printApprovals(env.stdout, v.Root(), items, time.Now())
		printScheduled(ctx, env.stdout, cfg) // approvals_later.go
		printStoreNotice(ctx, env.stdout, cfg, time.Now())
		printApprovalMode(ctx, env.stdout, env, cfg, false)
		return nil
	case verb == "cancel" && len(rest) == 2:
		return cancelScheduled(ctx, env.stdout, cfg, v, rest[1]) // approvals_later.go
	case verb == "show" && len(rest) == 2:
		it, err := v.Resolve(rest[1])
		if err != nil {
			return unknownID(err)
		}
		one := []approval.Item{*it}
		markDead(ctx, cfg, v, one)
		printRequest(env.stdout, &one[0], time.Now())
		return nil
	case (verb == "approve" || verb == "reject") && len(rest) == 2:
		decide, moved := v.Approve, approval.DirApproved
		if verb == "reject" {
			decide, moved = v.Reject, approval.DirRejected
		}
		id := rest[1]
		if verb == "approve" {
			// The human approves what they have just seen: the email is shown
			// and confirmed before anything moves.
			it, err := v.Resolve(id, approval.DirPending, approval.DirRejected)
			if err == nil {
				printRequest(env.stdout, it, time.Now())
				if err := confirmApproval(env, it, yes); err != nil {
					return err
				}
				id = it.Name
			}
		}
		it, err := decide(id)
		if err != nil {
			return unknownID(err)
		}
		fmt.Fprintf(env.stdout, "%s/%s → %s/%s\n  %s\n", it.Folder, it.Name, moved, it.Moved, approvalSummary(it, time.Now()))
		if verb == "approve" {
			printApprovalMode(ctx, env.stdout, env, cfg, true) // what the running servers will do: approvals_mode.go
		} else {
			fmt.Fprintln(env.stdout, "The agent's next identical call is told the approver rejected it.")
		}
		return nil
	}
	return approvalsArgsError(verb, rest)
}

// approvalsArgsError says what is wrong with the subcommand and its
// arguments, and what is accepted.
func approvalsArgsError(verb string, rest []string) error {
	switch verb {
	case "list":
		return usageError("approvals", "unexpected argument %q: list takes none", rest[1])
	case "show", "approve", "reject", "cancel":
		if len(rest) < 2 {
			return usageError("approvals", "%s needs an ID: a name as \"mailgate approvals\" lists it, a request_id, or a unique start of either", verb)
		}
		return usageError("approvals", "%s takes one ID, not %d (unexpected %q)", verb, len(rest)-1, rest[2])
	}
	return usageError("approvals", "unknown subcommand %q: use show ID, approve [--yes] ID, reject ID, cancel ID, --web for the approval page, or none to list the requests", verb)
}

// unknownID adds to an ID that matches no request file (or several) what an
// ID is and where the IDs are listed.
func unknownID(err error) error {
	switch {
	case errors.Is(err, approval.ErrUnknownID):
		return fmt.Errorf("%w. An ID is a request file's name as \"mailgate approvals\" lists it (or its request_id), or any unique start of either, such as its date or the first hex digits of the id at its end; list them with: mailgate approvals", err)
	case errors.Is(err, approval.ErrAmbiguousID):
		return fmt.Errorf("%w. Give more of the name (\"mailgate approvals\" lists them)", err)
	}
	return err
}

func printApprovals(w io.Writer, root string, items []approval.Item, now time.Time) {
	fmt.Fprintf(w, "Vault %s\n", root)
	pending := 0
	for _, dir := range approval.ListFolders {
		var these []approval.Item
		for _, it := range items {
			if it.Folder == dir {
				these = append(these, it)
			}
		}
		if dir == approval.DirPending {
			pending = len(these)
		}
		fmt.Fprintf(w, "\n%s/ (%d)\n", dir, len(these))
		for i := range these {
			fmt.Fprintf(w, "  %s  %s\n", strings.TrimSuffix(these[i].Name, ".md"), approvalSummary(&these[i], now))
		}
	}
	if pending > 0 {
		fmt.Fprint(w, "\nRead one with: mailgate approvals show ID\nDecide with:   mailgate approvals approve ID  |  mailgate approvals reject ID\n")
	}
}

// approvalsWebArgs takes --web and --no-open out of the arguments.
func approvalsWebArgs(args []string) (rest []string, web, noOpen bool) {
	for _, a := range args {
		switch a {
		case "--web", "-web":
			web = true
		case "--no-open", "-no-open":
			noOpen = true
		default:
			rest = append(rest, a)
		}
	}
	return rest, web, noOpen
}

// approvalsArgs takes --yes (or -y) out of the subcommand's arguments,
// wherever it stands.
func approvalsArgs(args []string) (rest []string, yes bool) {
	for _, a := range args {
		switch a {
		case "--yes", "-yes", "-y":
			yes = true
		default:
			rest = append(rest, a)
		}
	}
	return rest, yes
}

// errNotConfirmed ends an approval the human did not confirm.
var errNotConfirmed = errors.New("not approved: nothing was moved")

// confirmApproval asks on the terminal. Without a terminal (a pipe, a
// script, an agent's shell) nothing is approved unless --yes says so: a
// question nobody can see must not be answered by whatever stdin holds.
func confirmApproval(env *environment, it *approval.Item, yes bool) error {
	if yes {
		return nil
	}
	if !isTerminal(env.stdin) {
		return fmt.Errorf("refusing to approve %s without confirmation: standard input is not a terminal. "+
			"Read the email above, then run `mailgate approvals approve --yes %s` to approve it from a script", it.Name, strings.TrimSuffix(it.Name, ".md"))
	}
	fmt.Fprintf(env.stdout, "\nApprove sending this email to %s? Type yes to approve: ", recipientOf(it))
	line, _ := bufio.NewReader(env.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errNotConfirmed
}

// isTerminal reports whether r is a character device (a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func recipientOf(it *approval.Item) string {
	if it.Kind.IsAction() {
		return actionRecipients(it) // approvals_action.go
	}
	if a, err := mail.ParseAddress(it.To); err == nil {
		return a.Address
	}
	if it.To != "" {
		return warnings.Escape(it.To)
	}
	return "the sender of the message answered in thread " + it.ThreadID
}

// printRequest shows one request file as the approver must see it: where
// it is and what it says about itself, the exact recipient, the subject, the
// warnings (those written into the file when it was made, and those the
// current text raises, so a correction is checked too), and the body with
// every hidden character made visible.
func printRequest(w io.Writer, it *approval.Item, now time.Time) {
	fmt.Fprintf(w, "Request  %s\nFolder   %s/", it.Name, it.Folder)
	if it.Status != "" {
		fmt.Fprintf(w, " (status %s)", it.Status)
	}
	fmt.Fprintf(w, "\nFile     %s\n", it.Path)
	if it.Invalid != "" {
		fmt.Fprintf(w, "\nNot a readable request; mailgate ignores it: %s\n", it.Invalid)
		if it.Dead != "" {
			fmt.Fprintf(w, "CANNOT BE USED: %s\n", it.Dead)
		}
		return
	}
	if it.Account != "" {
		fmt.Fprintf(w, "Account  %s (the Gmail account it is sent or done from)\n", warnings.Escape(it.Account))
	}
	if it.From != "" {
		fmt.Fprintf(w, "From     %s (send-as address)\n", warnings.Escape(it.From))
	}
	switch it.Kind {
	case approval.KindSend:
		fmt.Fprintf(w, "Type     send\n")
	case approval.KindReply:
		fmt.Fprintf(w, "Type     reply in thread %s, answering message %s\n", it.ThreadID, it.MessageID)
	case approval.KindSendDraft, approval.KindTrash, approval.KindLabelDelete, approval.KindFilterCreate, approval.KindVacation, approval.KindUnsubscribe:
		fmt.Fprintf(w, "Type     %s\n", actionType(it))
	case approval.KindForward:
		fmt.Fprintf(w, "Type     forward of message %s\n", it.MessageID)
	default:
		fmt.Fprintf(w, "Type     %q\n", string(it.Kind))
	}
	fmt.Fprintf(w, "To       %s\n", recipientOf(it))
	if a, err := mail.ParseAddress(it.To); err == nil && a.Name != "" {
		fmt.Fprintf(w, "         (shown in the file as %q; only the address is used)\n", warnings.Escape(it.To))
	}
	for _, l := range []struct {
		label string
		list  []string
	}{{"Cc       ", it.Cc}, {"Bcc      ", it.Bcc}, {"Attached ", it.Attachments}} {
		for _, v := range l.list {
			fmt.Fprintf(w, "%s%s\n", l.label, warnings.Escape(v))
		}
	}
	if it.HTMLSHA256 != "" {
		fmt.Fprintf(w, "HTML     %s (sha256 %s)\n", approval.HTMLDescription(it.HTMLFrom), it.HTMLSHA256)
		for _, l := range approval.HTMLLinkLines(it.HTMLLinks) {
			fmt.Fprintf(w, "         %s\n", warnings.Escape(l))
		}
	}
	fmt.Fprintf(w, "Subject  %s\n", warnings.Escape(it.Subject))
	if !it.Created.IsZero() {
		fmt.Fprintf(w, "Created  %s", approvalStamp(it.Created))
		if !it.Expires.IsZero() {
			word := "expires"
			if it.Expired(now) {
				word = "EXPIRED"
			}
			fmt.Fprintf(w, "   %s %s", word, approvalStamp(it.Expires))
		}
		fmt.Fprintln(w)
	}
	switch {
	case it.Dead != "":
		fmt.Fprintf(w, "Status   CANNOT BE USED: the gate will never send from this file: %s\n", it.Dead)
	case it.Instructions != "":
		fmt.Fprintf(w, "Status   %s\n", it.Instructions)
	}
	if it.Reason != "" {
		fmt.Fprintf(w, "Reason   %s\n", it.Reason)
	}
	ws := currentWarnings(it)
	if len(ws) == 0 {
		fmt.Fprintf(w, "\nWarnings: none\n")
	} else {
		fmt.Fprintf(w, "\nWarnings (%d):\n", len(ws))
		for _, s := range ws {
			fmt.Fprintf(w, "  ! %s\n", s)
		}
	}
	fmt.Fprintf(w, "\n%s\n", bodyHeading(it))
	body := strings.TrimSuffix(warnings.Escape(it.Body), "\n")
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintf(w, "  │ %s\n", l)
	}
	fmt.Fprintf(w, "  └ end of body (%d characters)\n", utf8.RuneCountInString(it.Body))
}

// currentWarnings merges the file's warnings with what its current text
// raises, without repeats (approval.Item.CurrentWarnings).
func currentWarnings(it *approval.Item) []string { return it.CurrentWarnings() }

// approvalSummary is one line about a request: kind, recipient (in full:
// masking is for the audit log, not for the owner) or thread, subject, and
// the times or outcome that matter in its folder.
func approvalSummary(it *approval.Item, now time.Time) string {
	if it.Dead != "" && it.Invalid != "" {
		return "CANNOT BE USED: " + it.Dead
	}
	if it.Invalid != "" {
		return "(not a readable request, ignored by mailgate: " + it.Invalid + ")"
	}
	var parts []string
	switch it.Kind {
	case approval.KindSend:
		parts = append(parts, "send to "+recipientOf(it))
	case approval.KindForward:
		parts = append(parts, "forward of message "+it.MessageID+" to "+recipientOf(it))
	case approval.KindReply:
		p := "reply in thread " + it.ThreadID
		if it.To != "" {
			p += " to " + recipientOf(it)
		}
		parts = append(parts, p)
	case approval.KindSendDraft, approval.KindTrash, approval.KindLabelDelete, approval.KindFilterCreate, approval.KindVacation, approval.KindUnsubscribe:
		parts = append(parts, actionType(it))
	default:
		parts = append(parts, fmt.Sprintf("type %q", string(it.Kind)))
	}
	if it.From != "" {
		parts[0] = "from " + warnings.Escape(it.From) + ": " + parts[0]
	}
	if it.Account != "" {
		parts[0] = "account " + warnings.Escape(it.Account) + ": " + parts[0]
	}
	parts = append(parts, fmt.Sprintf("%q", clipText(warnings.Escape(it.Subject), 80)))
	if n := len(it.Warnings); n > 0 && it.Folder != approval.DirDone {
		parts = append(parts, fmt.Sprintf("%d WARNING(S)", n))
	}
	if it.Folder == approval.DirDone {
		switch it.Status {
		case approval.StatusSent:
			parts = append(parts, doneWord(it)+" "+approvalStamp(it.SentAt))
			if it.Edited != "" {
				parts = append(parts, "as corrected by the approver ("+it.Edited+")")
			}
		case approval.StatusFailed:
			parts = append(parts, "FAILED: "+clipText(it.Error, 80))
		case approval.StatusUnknown:
			parts = append(parts, "outcome UNKNOWN (check Sent before approving again): "+clipText(it.Error, 60))
		default:
			parts = append(parts, "claimed, outcome not recorded (check Sent before approving again)")
		}
		return strings.Join(parts, "  ")
	}
	if it.Dead != "" {
		parts = append(parts, "CANNOT BE USED: "+it.Dead)
		return strings.Join(parts, "  ")
	}
	if it.Status == approval.StatusRefused {
		parts = append(parts, "REFUSED by mailgate: "+clipText(it.Reason, 100))
		return strings.Join(parts, "  ")
	}
	if !it.Created.IsZero() {
		parts = append(parts, "created "+approvalStamp(it.Created))
	}
	switch {
	case it.Expired(now):
		parts = append(parts, "EXPIRED "+approvalStamp(it.Expires))
	case !it.Expires.IsZero():
		parts = append(parts, "expires "+approvalStamp(it.Expires))
	}
	return strings.Join(parts, "  ")
}

func approvalStamp(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
