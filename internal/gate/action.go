package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/warnings"
)

// Actions on existing mail (approval.KindSendDraft, approval.KindTrash) run
// through Run like a send, in the same order and with the same claim; what
// differs is decided here: which take a slot of the send limit, how they are
// audited, and what the agent is told.

// reserve takes a slot of the send limit for a's request, or none (nil) for
// a kind that puts nothing in anyone's inbox (trash).
func (g *Gate) reserve(ctx context.Context, a *approval.Approval) (*ratelimit.Reservation, error) {
	if !a.Kind.CountsAsSend() {
		return nil, nil
	}
	return limiterFor(g.Limiter, a.Final.Account).Reserve(ctx, g.now(), refFor(a)) // account.go
}

// check is DEV_MODE's look at the send limit: how long until a slot is free
// (0 now, and always 0 for a kind that takes none).
func (g *Gate) check(ctx context.Context, r approval.Request) (time.Duration, error) {
	if !r.Kind.CountsAsSend() {
		return 0, nil
	}
	return limiterFor(g.Limiter, r.Account).Check(ctx, g.now())
}

// actionTarget is what an action's audit lines name: "draft:<id>",
// "thread:<id>" or "message:<id>" (ids, never an address).
func actionTarget(r approval.Request) string {
	switch {
	case r.Kind.IsSettings():
		return r.Target // "label:<id>", "filter", "vacation", "message:<id>"
	case r.Kind == approval.KindSendDraft:
		return "draft:" + r.DraftID
	case r.ThreadID != "":
		return "thread:" + r.ThreadID
	}
	return "message:" + r.MessageID
}

// actionWords name an action in the agent's texts.
type actionWords struct {
	tool, what, done, verb, failed string
}

// phrase is "to <verb> <what>" ("to move to Trash message m1"); a
// settings kind's what is the whole imperative ("to delete label …").
func (w actionWords) phrase() string {
	if w.verb == "" {
		return "to " + w.what
	}
	return "to " + w.verb + " " + w.what
}

func wordsFor(r approval.Request) actionWords {
	if w, ok := settingsWords[r.Kind]; ok {
		w.what = r.Subject
		return w
	}
	if r.Kind == approval.KindSendDraft {
		return actionWords{tool: "send_draft", what: "draft " + r.DraftID, done: "sent", verb: "send", failed: "Error sending draft: "}
	}
	what := "message " + r.MessageID
	if r.ThreadID != "" {
		what = "thread " + r.ThreadID
	}
	return actionWords{tool: "trash_email", what: what, done: "moved to Trash", verb: "move to Trash", failed: "Error moving to Trash: "}
}

// actionMessage renders an action's outcome for the agent.
func (o Outcome) actionMessage() string {
	w := wordsFor(o.Request)
	switch o.Status {
	case Sent:
		if o.Kind.IsSettings() {
			return settingsDone(o)
		}
		if o.Kind == approval.KindSendDraft {
			return fmt.Sprintf("Draft sent successfully. Draft ID: %s Message ID: %s Thread ID: %s", o.Request.DraftID, o.Result.MessageID, o.Result.ThreadID)
		}
		return fmt.Sprintf("Moved to Trash: %s (recoverable from Gmail's Trash for 30 days).", w.what)

	case AwaitingApproval:
		var b strings.Builder
		b.WriteString(o.refusalText(w.phrase()+" as it is now", w.tool, "the same arguments"))
		if o.Kind == approval.KindSendDraft {
			b.WriteString(" The approval is for the draft exactly as it is now: if it is edited, it needs a new approval.")
		}
		if p := o.Pending; p != nil {
			fmt.Fprintf(&b, "\nRequest file: %s\nThe human is asked to approve exactly this:\n%s", p.Path, fenced(o.Kind, actionBlock(o.Request, p.Warnings)))
		}
		return b.String()

	case RejectedByApprover:
		var re *approval.RejectedError
		if errors.As(o.Err, &re) && re.Refused {
			return fmt.Sprintf("Rejected: The approval of this request was changed in a way an approval cannot allow: %s. Nothing was done (vault/%s/%s records why); do not retry it.",
				re.Reason, approval.DirRejected, re.Name)
		}
		name := ""
		if re != nil {
			name = re.Name
		}
		return fmt.Sprintf("Rejected: The approver rejected this request %s (vault/%s/%s). Nothing was done; do not retry it.", w.phrase(), approval.DirRejected, name) + approverReason(re)

	case DevMode:
		var b strings.Builder
		if o.Kind.IsSettings() {
			fmt.Fprintf(&b, "[DEV_MODE] Request to %s logged but not executed", w.what)
		} else {
			fmt.Fprintf(&b, "[DEV_MODE] %s of %s logged but not executed", strings.ToUpper(w.verb[:1])+w.verb[1:], w.what)
		}
		o.writeDevChecks(&b)
		b.WriteString(". Nothing was done (DEV_MODE=true).")
		if p := o.Pending; p != nil {
			fmt.Fprintf(&b, "\nRequest file: %s\nThe human is asked to approve exactly this:\n%s", p.Path, fenced(o.Kind, actionBlock(o.Request, p.Warnings)))
		}
		return b.String()

	case Failed, Unknown:
		msg := w.failed + errText(o.Err)
		if o.Status == Unknown {
			if o.Kind.IsSettings() {
				msg += fmt.Sprintf(". The request may have reached its destination, so this may or may not have been done (%s); it will not be retried. Check Gmail before asking for a new approval", w.what)
			} else {
				msg += fmt.Sprintf(". The request may have reached Gmail, so the %s may or may not have been %s; it will not be retried. Check Gmail before asking for a new approval", w.what, w.done)
			}
		}
		if o.DoneFile != "" {
			msg += fmt.Sprintf(". The approval was used up (vault/%s/%s records this attempt); trying again needs a new approval", approval.DirDone, o.DoneFile)
		}
		return msg + "."
	}
	// Backlog, RateLimited, Conflict, Invalid read the same for every kind.
	o.Kind = approval.KindSend
	return o.Message()
}

// actionBlock shows an action as the approver sees it: mailgate's
// description (hidden characters made visible) and the warnings.
func actionBlock(r approval.Request, ws []string) string {
	var b strings.Builder
	if r.Account != "" {
		fmt.Fprintf(&b, "Account: %s\n", r.Account)
	}
	writeWarnings(&b, ws)
	b.WriteString("--- request ---\n")
	b.WriteString(strings.TrimRight(warnings.Escape(r.Body), "\n"))
	b.WriteString("\n--- end of request ---")
	return b.String()
}

// writeDevChecks is what a DEV_MODE answer says of the checks: the
// approval, and the send limit for a kind that takes a slot.
func (o Outcome) writeDevChecks(b *strings.Builder) {
	switch {
	case o.DevApprovalFound:
		fmt.Fprintf(b, ". Approval: found (vault/%s/%s), would be consumed", approval.DirApproved, o.Approval.Name)
		if len(o.Approval.Edited) > 0 {
			fmt.Fprintf(b, "; the approver corrected the %s, and the corrected email would be sent", strings.Join(o.Approval.Edited, " and "))
		}
	case o.DevRejected:
		b.WriteString(". Approval: rejected by the approver")
	default:
		fmt.Fprintf(b, ". Approval: none; a request was written to vault/%s/%s", approval.DirPending, o.PendingFile)
	}
	switch {
	case !o.Kind.CountsAsSend():
	case o.DevLimitOK:
		b.WriteString(". Rate limit: ok")
	default:
		fmt.Fprintf(b, ". Rate limit: exceeded, next send available in %d minutes",
			(&ratelimit.LimitError{RetryAfter: o.RetryAfter}).RetryMinutes())
	}
}

// writeWarnings lists the warnings the human is shown, or says there are
// none.
func writeWarnings(b *strings.Builder, ws []string) {
	if len(ws) == 0 {
		b.WriteString("Warnings: none\n")
		return
	}
	b.WriteString("Warnings:\n")
	for _, w := range ws {
		b.WriteString("- " + w + "\n")
	}
}
