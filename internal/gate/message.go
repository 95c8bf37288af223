package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// Message renders the outcome as the text the agent receives, using the
// email tool contracts' wording where they define one
// (specs/email-mcp-tool-contracts.md) and adding what the agent and the
// human must do next. Addresses are masked; paths are relative to the vault
// as "vault/…".
func (o Outcome) Message() string {
	send := o.Kind != approval.KindReply
	switch o.Status {
	case Sent:
		what := "Email"
		if !send {
			what = "Reply"
		}
		return fmt.Sprintf("%s sent successfully. Message ID: %s Thread ID: %s", what, o.Result.MessageID, o.Result.ThreadID)

	case AwaitingApproval:
		var b strings.Builder
		if send {
			fmt.Fprintf(&b, "Rejected: No matching approval file found in vault/Approved/ for sending to %s. Create an approval file with type: email_send and move it to vault/Approved/.", o.Target)
		} else {
			fmt.Fprintf(&b, "Rejected: No matching approval file found in vault/Approved/ for replying to thread %s. Create an approval file with type: email_reply and move it to vault/Approved/.", strings.TrimPrefix(o.Target, "thread:"))
		}
		fmt.Fprintf(&b, " A request for this exact email has been written to vault/%s/%s. "+
			"Ask the human to review it and move it to vault/%s/ to allow it to be sent once (or to vault/%s/ to refuse it), "+
			"then call %s again with exactly the same content. Do not retry before then.",
			approval.DirPending, o.PendingFile, approval.DirApproved, approval.DirRejected, toolName(send))
		return b.String()

	case RejectedByApprover:
		name := ""
		var re *approval.RejectedError
		if errors.As(o.Err, &re) {
			name = re.Name
		}
		return fmt.Sprintf("Rejected: The approver rejected this email (vault/%s/%s). It will not be sent; do not retry it.", approval.DirRejected, name)

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
	if send {
		fmt.Fprintf(&b, "[DEV_MODE] Send logged but not executed. To: %s, Subject: %s", o.Target, o.Subject)
	} else {
		fmt.Fprintf(&b, "[DEV_MODE] Reply logged but not executed. Thread: %s, Body length: %d chars", strings.TrimPrefix(o.Target, "thread:"), o.BodyChars)
	}
	switch {
	case o.DevApprovalFound:
		fmt.Fprintf(&b, ". Approval: found (vault/%s/%s), would be consumed", approval.DirApproved, o.Approval.Name)
	case o.DevRejected:
		b.WriteString(". Approval: rejected by the approver")
	default:
		fmt.Fprintf(&b, ". Approval: none; a request was written to vault/%s/%s", approval.DirPending, o.PendingFile)
	}
	if o.DevLimitOK {
		b.WriteString(". Rate limit: ok")
	} else {
		fmt.Fprintf(&b, ". Rate limit: exceeded, next send available in %d minutes",
			(&ratelimit.LimitError{RetryAfter: o.RetryAfter}).RetryMinutes())
	}
	b.WriteString(". Nothing was sent (DEV_MODE=true).")
	return b.String()
}

func toolName(send bool) string {
	if send {
		return "send_email"
	}
	return "reply_email"
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.TrimSuffix(err.Error(), ".")
}
