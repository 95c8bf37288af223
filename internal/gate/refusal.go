package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mailgate/mailgate/internal/approval"
)

// refusalText is the one answer of every gated tool (send_email,
// reply_email, forward_email, send_draft, trash_email) that found no
// approval: the contract's words first (specs/email-mcp-tool-contracts.md
// defines them for send and reply; the other tools say the same in the same
// shape), then what really happens. The contract tells the agent to "create
// an approval file"; in content mode a hand-written file is never used, so
// the next sentence says so at once, before the agent tries.
//
// what names the call as the contract does ("for sending to j***@…", "to
// send draft r-1 as it is now"); tool and retry say how to call again.
func (o Outcome) refusalText(what, tool, retry string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rejected: No matching approval file found in vault/%s/ %s.", approval.DirApproved, what)
	switch o.Kind {
	case approval.KindSend:
		fmt.Fprintf(&b, " Create an approval file with type: %s and move it to vault/%s/.", approval.KindSend, approval.DirApproved)
	case approval.KindReply:
		fmt.Fprintf(&b, " Create an approval file with type: %s and move it to vault/%s/.", approval.KindReply, approval.DirApproved)
	}
	if o.Mode == approval.ModeRecipient && (o.Kind == approval.KindSend || o.Kind == approval.KindReply) {
		b.WriteString(" The request file below is what the human approves; a hand-written file naming the same recipients is accepted too (APPROVAL_MODE=recipient).")
	} else {
		fmt.Fprintf(&b, " The request file below is what the human approves; a hand-written file is not used (APPROVAL_MODE=%s).", o.modeName())
	}
	var nm *approval.NoMatchError
	if errors.As(o.Err, &nm) && len(nm.Unusable) > 0 {
		what := "this email"
		if o.Kind.IsAction() {
			what = "this request"
		}
		fmt.Fprintf(&b, "\nAn approval of %s is in vault/%s/ but cannot be used: %s. The human should delete it and approve the new request below instead.",
			what, approval.DirApproved, strings.Join(nm.Unusable, "; "))
	}
	if p := o.Pending; p != nil && p.Earlier.Repeat() {
		b.WriteString("\n" + earlierText(p.Earlier))
		if !o.Kind.IsAction() {
			b.WriteString(" Do not send it again unless the human asks for a second copy: the new request is marked as a repeat, and only if the human approves it will your next identical call send a second copy.")
		}
	}
	request, allow := "A request for this exact email", "to allow it to be sent once"
	if o.Kind.IsAction() {
		request, allow = "A request", "to allow it once"
	}
	fmt.Fprintf(&b, "\n%s has been written to vault/%s/%s. "+
		"Ask the human to review it and move it to vault/%s/ %s (or to vault/%s/ to refuse it), "+
		"then call %s again with %s. Do not retry before then.",
		request, approval.DirPending, o.PendingFile, approval.DirApproved, allow, approval.DirRejected, tool, retry)
	return b.String()
}

// modeName is the approval mode as APPROVAL_MODE spells it (content when
// the gate was built without one: the vault's default).
func (o Outcome) modeName() approval.Mode {
	if o.Mode == "" {
		return approval.ModeContent
	}
	return o.Mode
}
