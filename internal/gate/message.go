package gate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/warnings"
)

// Message renders the outcome as the text the agent receives: the email tool
// contracts' wording first where they define one
// (specs/email-mcp-tool-contracts.md; addresses masked there, as the
// contract shows them), then what the agent and the human must do next and
// exactly what the human is asked to approve: the recipient unmasked after
// Reply-To resolution, the final subject, the warnings, the body, and the
// request file's absolute path.
func (o Outcome) Message() string {
	msg := o.message()
	if a := o.Request.Account; a != "" && o.Status != Invalid {
		// The account that sends or acts, named in every answer about a
		// request once the home has several (issue 27 item 2).
		msg = strings.TrimRight(msg, "\n") + "\nAccount: " + a + " (the Gmail account this request is for)"
	}
	return msg
}

func (o Outcome) message() string {
	if o.Kind.IsAction() {
		return o.actionMessage() // action.go
	}
	send := o.Kind != approval.KindReply
	switch o.Status {
	case Sent:
		what := "Email"
		if !send {
			what = "Reply"
		}
		msg := fmt.Sprintf("%s sent successfully. Message ID: %s Thread ID: %s", what, o.Result.MessageID, o.Result.ThreadID)
		if o.AlreadyInSent {
			msg = fmt.Sprintf("%s already sent: an earlier approved copy of it left before mailgate could record it, and Sent holds it (Message ID: %s Thread ID: %s). It was not sent again; this approval is recorded as used for it.",
				what, o.Result.MessageID, o.Result.ThreadID)
		}
		if a := o.Approval; a != nil && len(a.Edited) > 0 {
			msg += fmt.Sprintf("\nThe approver corrected the %s before approving, so what was sent differs from your request. What was sent:\n%s",
				strings.Join(a.Edited, " and "), fenced(o.Kind, emailBlock(a.Final, nil, false)))
		}
		return msg

	case Scheduled:
		at := approval.FormatSendAt(o.Request.SendAt)
		if a := o.Approval; a != nil {
			at = approval.FormatSendAt(a.Final.SendAt)
		}
		return fmt.Sprintf("Approved and scheduled: this email will be sent once at %s (UTC) by whichever mailgate server runs then; nothing was sent yet. "+
			"Do not call again for it. The user can withdraw it before then with: mailgate approvals cancel %s (vault/%s/%s).",
			at, strings.TrimSuffix(o.DoneFile, ".md"), approval.DirDone, o.DoneFile)

	case AwaitingApproval:
		what := "for sending to " + o.Target
		switch {
		case o.Kind == approval.KindForward:
			what = fmt.Sprintf("for forwarding message %s to %s", o.Request.MessageID, o.Target)
		case !send:
			what = "for replying to thread " + strings.TrimPrefix(o.Target, "thread:")
		}
		var b strings.Builder
		b.WriteString(o.refusalText(what, toolName(o.Kind), "exactly the same content"))
		p := o.Pending
		if len(o.Request.Attachments) > 0 {
			b.WriteString(" Each attachment is bound by its size and SHA-256: if a file changed after the human approved an earlier request, " +
				"that approval no longer applies and this new request, with the file as it is now, needs approving.")
		}
		if p != nil {
			fmt.Fprintf(&b, "\nRequest file: %s\nThe human is asked to approve exactly this (they may correct the subject or body first):\n%s", p.Path, fenced(o.Kind, emailBlock(o.Request, p.Warnings, true)))
		}
		return b.String()

	case RejectedByApprover:
		name := ""
		var re *approval.RejectedError
		if errors.As(o.Err, &re) {
			name = re.Name
		}
		if re != nil && re.Refused {
			return fmt.Sprintf("Rejected: The approver changed this email in a way an approval cannot allow: %s. Nothing was sent, and this request will not be sent (vault/%s/%s records why); do not retry it. "+
				"If the email should go elsewhere, send a new request with that recipient.", re.Reason, approval.DirRejected, name)
		}
		msg := fmt.Sprintf("Rejected: The approver rejected this email (vault/%s/%s). It will not be sent; do not retry it.", approval.DirRejected, name)
		msg += approverReason(re)
		return msg

	case Backlog:
		return fmt.Sprintf("Rejected: %s. Nothing was written and nothing was sent. Ask the human to approve or reject the waiting requests (mailgate approvals) before asking for more.", errText(o.Err))

	case RateLimited:
		le := &ratelimit.LimitError{Limit: o.Limit, RetryAfter: o.RetryAfter}
		errors.As(o.Err, &le)
		return fmt.Sprintf("Rejected: %s The approval stays in vault/%s/ and can be used then.", le.Error(), approval.DirApproved)

	case DevMode:
		return o.devMessage(send)

	case Conflict:
		return "Rejected: The approval for this email was already used by another call, or changed while it was being claimed. " +
			"Nothing was sent by this call; do not retry it without checking whether the email went out."

	case Invalid:
		return "Error: " + errText(o.Err)

	case Failed, Unknown:
		prefix := "Error sending email: "
		if !send {
			prefix = "Error replying to thread: "
		}
		msg := prefix + errText(o.Err)
		if o.Status == Unknown {
			msg += ". The request may have reached Gmail, so it may or may not have been sent; it will not be retried. Check the Sent folder before asking for a new approval"
		}
		if o.DoneFile != "" {
			msg += fmt.Sprintf(". The approval was used up (vault/%s/%s records this attempt); sending again needs a new approval", approval.DirDone, o.DoneFile)
		}
		return msg + "."
	}
	return "Error: internal error"
}

func (o Outcome) devMessage(send bool) string {
	var b strings.Builder
	switch {
	case send && SenderText(o.Kind):
		// A forward's subject is the sender's: it is shown in the fenced
		// request below, not here.
		fmt.Fprintf(&b, "[DEV_MODE] Send logged but not executed. To: %s, Subject: (in the request below)", o.Target)
	case send:
		fmt.Fprintf(&b, "[DEV_MODE] Send logged but not executed. To: %s, Subject: %s", o.Target, o.Subject)
	default:
		fmt.Fprintf(&b, "[DEV_MODE] Reply logged but not executed. Thread: %s, Body length: %d chars", strings.TrimPrefix(o.Target, "thread:"), o.BodyChars)
	}
	o.writeDevChecks(&b) // action.go
	b.WriteString(". Nothing was sent (DEV_MODE=true).")
	if p := o.Pending; p != nil {
		if p.Earlier.Repeat() {
			b.WriteString("\n" + earlierText(p.Earlier) + " The new request is marked as a repeat.")
		}
		fmt.Fprintf(&b, "\nRequest file: %s\nThe human is asked to approve exactly this:\n%s", p.Path, fenced(o.Kind, emailBlock(o.Request, p.Warnings, true)))
	}
	return b.String()
}

// RequestFenceWhat names the fence around a request shown to the agent.
const RequestFenceWhat = "EMAIL REQUEST"

// SenderText reports a kind whose request, as shown to the agent, holds
// text an email's sender wrote: a reply's subject, a forward's subject,
// body and file names, the message a trash request describes, a draft
// (which may quote mail). Such a request is shown inside a fence
// (internal/fence, the one renderer of sender text), warnings included,
// since they may quote it.
func SenderText(k approval.Kind) bool {
	switch k {
	case approval.KindReply, approval.KindForward, approval.KindTrash, approval.KindSendDraft, approval.KindUnsubscribe:
		return true
	}
	return false
}

// fenced returns block inside a fence when kind's requests carry sender
// text, else as is.
func fenced(k approval.Kind, block string) string {
	if !SenderText(k) {
		return block
	}
	return fence.Text(RequestFenceWhat, block)
}

// earlierText says what became of the last consumed copy of this email.
func earlierText(h *approval.Handled) string {
	switch {
	case h.Status == approval.StatusScheduled:
		return fmt.Sprintf("This exact email is already approved and scheduled (vault/%s/%s): it will be sent at its time. Do not ask again; approving this new request would send a second copy.", approval.DirDone, h.Name)
	case h.Status == approval.StatusSent && !h.SentAt.IsZero():
		return fmt.Sprintf("This exact email was already sent at %s (vault/%s/%s).", h.SentAt.UTC().Format(time.RFC3339), approval.DirDone, h.Name)
	case h.Status == approval.StatusSent:
		return fmt.Sprintf("This exact email was already sent (vault/%s/%s).", approval.DirDone, h.Name)
	}
	return fmt.Sprintf("This exact email may already have been sent: an earlier approval of it was used and its outcome is not known yet (vault/%s/%s). The new request keeps that email's Message-ID, so if the earlier one did leave, approving this one sends nothing twice.", approval.DirDone, h.Name)
}

// emailBlock shows an email as the approver sees it: recipient unmasked,
// subject, warnings, and the body between markers.
func emailBlock(r approval.Request, ws []string, showWarnings bool) string {
	var b strings.Builder
	if r.Account != "" {
		fmt.Fprintf(&b, "Account: %s\n", r.Account)
	}
	to := r.Address()
	if to == "" {
		to = "(the sender of message " + r.MessageID + ")"
	}
	tos, cc, bcc := r.Recipients()
	if len(tos) > 1 {
		to = strings.Join(tos, ", ")
	}
	if r.From != "" {
		fmt.Fprintf(&b, "From: %s (send-as address)\n", r.From)
	}
	switch r.Kind {
	case approval.KindReply:
		fmt.Fprintf(&b, "To: %s (reply in thread %s, answering message %s)\n", to, r.ThreadID, r.MessageID)
	case approval.KindForward:
		fmt.Fprintf(&b, "To: %s (forwarding message %s)\n", strings.Join(tos, ", "), r.MessageID)
	default:
		fmt.Fprintf(&b, "To: %s\n", to)
	}
	if len(cc) > 0 {
		fmt.Fprintf(&b, "Cc: %s\n", strings.Join(cc, ", "))
	}
	if len(bcc) > 0 {
		fmt.Fprintf(&b, "Bcc: %s\n", strings.Join(bcc, ", "))
	}
	fmt.Fprintf(&b, "Subject: %s\n", warnings.Escape(r.Subject))
	if !r.SendAt.IsZero() {
		fmt.Fprintf(&b, "Send at: %s (UTC), not when approved (send later)\n", approval.FormatSendAt(r.SendAt))
	}
	if showWarnings {
		writeWarnings(&b, ws) // action.go
	}
	b.WriteString("--- body ---\n")
	b.WriteString(strings.TrimRight(warnings.Escape(r.Body), "\n"))
	b.WriteString("\n--- end of body ---")
	if r.HTMLSHA256 != "" {
		b.WriteString("\n" + approval.HTMLDescription(string(r.HTMLFrom)))
		for _, l := range approval.HTMLLinkLines(approval.LinkStrings(r.HTMLLinks)) {
			b.WriteString("\n" + warnings.Escape(l))
		}
	}
	for _, a := range r.Attachments {
		fmt.Fprintf(&b, "\nAttachment: %s (%s, sha256 %s)", warnings.Escape(a.Name), mailmsg.FormatSize(a.Size), a.SHA256)
	}
	return b.String()
}

func toolName(k approval.Kind) string {
	switch k {
	case approval.KindReply:
		return "reply_email"
	case approval.KindForward:
		return "forward_email"
	}
	return "send_email"
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.TrimSuffix(err.Error(), ".")
}

// approverReason is what the agent is told of the approver's reason for a
// rejection (on one line), "" when they gave none.
func approverReason(re *approval.RejectedError) string {
	if re == nil {
		return ""
	}
	r := strings.Join(strings.Fields(re.Reason), " ")
	if r == "" {
		return ""
	}
	return " The approver's reason: " + r
}
