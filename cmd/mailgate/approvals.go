package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
)

const approvalsUsage = `Usage:
  mailgate approvals                list pending, approved, rejected and done requests
  mailgate approvals approve ID     move a pending (or rejected) request to Approved/
  mailgate approvals reject ID      move a pending (or approved, unused) request to Rejected/

ID is the name shown in the list, the request_id, or any unique start of either
(or of the hash after EMAIL_SEND_ / EMAIL_REPLY_). Configuration flags
(--vault, --home, …) go before the subcommand.
`

// approvalsCmd lists the vault or decides one request, for people who
// prefer a terminal to a file manager. A decision is the same move a file
// manager makes, so the gate needs nothing else. It is deliberately not an
// MCP tool: an agent must never approve its own email.
func approvalsCmd(ctx context.Context, env *environment, args []string) error {
	fset := flag.NewFlagSet("approvals", flag.ContinueOnError)
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		if herr := helpOrError(fset, err, env.stderr); herr == nil {
			fmt.Fprint(env.stderr, "\n"+approvalsUsage)
			return nil
		}
		return err
	}
	v, err := approval.Open(cfg.VaultPath, approval.Options{Mode: approval.Mode(cfg.ApprovalMode), TTL: cfg.ApprovalTTL})
	if err != nil {
		return fmt.Errorf("VAULT_PATH %s: %w", cfg.VaultPath, err)
	}
	rest := fset.Args()
	verb := "list"
	if len(rest) > 0 {
		verb = rest[0]
	}
	switch {
	case verb == "list" && len(rest) <= 1:
		items, err := v.List()
		if err != nil {
			return err
		}
		printApprovals(env.stdout, v.Root(), items, time.Now())
		printApprovalMode(ctx, env.stdout, env, cfg, false)
		return nil
	case (verb == "approve" || verb == "reject") && len(rest) == 2:
		decide, moved := v.Approve, approval.DirApproved
		if verb == "reject" {
			decide, moved = v.Reject, approval.DirRejected
		}
		it, err := decide(rest[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s/%s → %s/%s\n  %s\n", it.Folder, it.Name, moved, it.Name, approvalSummary(it, time.Now()))
		if verb == "approve" {
			printApprovalMode(ctx, env.stdout, env, cfg, true) // what the running servers will do: approvals_mode.go
		} else {
			fmt.Fprintln(env.stdout, "The agent's next identical call is told the approver rejected it.")
		}
		return nil
	}
	fmt.Fprint(env.stderr, approvalsUsage)
	return errUsage
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
		fmt.Fprint(w, "\nDecide with: mailgate approvals approve ID  |  mailgate approvals reject ID\n")
	}
}

// approvalSummary is one line about a request: kind, masked recipient or thread,
// subject, and the times or outcome that matter in its folder.
func approvalSummary(it *approval.Item, now time.Time) string {
	if it.Invalid != "" {
		return "(not a readable request, ignored by mailgate: " + it.Invalid + ")"
	}
	var parts []string
	switch it.Kind {
	case approval.KindSend:
		parts = append(parts, "send to "+audit.MaskAddress(it.To))
	case approval.KindReply:
		p := "reply in thread " + it.ThreadID
		if it.To != "" {
			p += " to " + audit.MaskAddress(it.To)
		}
		parts = append(parts, p)
	default:
		parts = append(parts, fmt.Sprintf("type %q", string(it.Kind)))
	}
	parts = append(parts, fmt.Sprintf("%q", clipText(it.Subject, 60)))
	if it.Folder == approval.DirDone {
		switch it.Status {
		case approval.StatusSent:
			parts = append(parts, "sent "+approvalStamp(it.SentAt))
		case approval.StatusFailed:
			parts = append(parts, "FAILED: "+clipText(it.Error, 80))
		case approval.StatusUnknown:
			parts = append(parts, "outcome UNKNOWN (check Sent before approving again): "+clipText(it.Error, 60))
		default:
			parts = append(parts, "claimed, outcome not recorded (check Sent before approving again)")
		}
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
