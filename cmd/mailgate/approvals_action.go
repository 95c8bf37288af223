package main

import (
	"strings"

	"github.com/mailgate/mailgate/internal/approval"
)

// How `mailgate approvals` shows the requests that act on existing mail
// (approval.Kind.IsAction: send_draft and trash_email): named by ids, with
// mailgate's description of the draft or of what is trashed where an
// email's body would be.

// actionType is the Type line (and the list's first column) of an action.
func actionType(it *approval.Item) string {
	switch {
	case it.Kind.IsSettings():
		return strings.TrimSpace(it.Subject) + " (" + string(it.Kind) + ", target " + strings.TrimSpace(it.Target) + ")"
	case it.Kind == approval.KindSendDraft:
		return "send draft " + strings.TrimSpace(it.DraftID) + " (content version " + strings.TrimSpace(it.MessageID) + ")"
	case strings.TrimSpace(it.ThreadID) != "":
		return "move to Trash: the whole thread " + strings.TrimSpace(it.ThreadID)
	}
	return "move to Trash: message " + strings.TrimSpace(it.MessageID)
}

// actionRecipients is the To line of an action.
func actionRecipients(it *approval.Item) string {
	switch it.Kind {
	case approval.KindSendDraft:
		return "every To, Cc and Bcc of the draft, listed below"
	case approval.KindUnsubscribe:
		return "the list's unsubscribe address or URL, shown below"
	case approval.KindVacation:
		return "every sender the responder answers, as shown below"
	case approval.KindFilterCreate:
		return "nobody now; a forwarding filter forwards future mail (shown below)"
	}
	return "nobody: nothing is sent"
}

// bodyHeading introduces the body area of any request.
func bodyHeading(it *approval.Item) string {
	switch it.Kind {
	case approval.KindSendDraft:
		return "The draft as Gmail holds it (what is sent; an edit here is refused; hidden characters are shown as ⟨…⟩):"
	case approval.KindTrash:
		return "What is moved to Trash (an edit here is refused; hidden characters are shown as ⟨…⟩):"
	case approval.KindLabelDelete, approval.KindFilterCreate, approval.KindVacation, approval.KindUnsubscribe:
		return "What will be done (mailgate's description; an edit here is refused; hidden characters are shown as ⟨…⟩):"
	}
	return "Body (exactly what is sent; hidden characters are shown as ⟨…⟩):"
}

// doneWord is what the list says of a request whose Done record says sent.
func doneWord(it *approval.Item) string {
	if it.Kind == approval.KindTrash {
		return "trashed"
	}
	if it.Kind.IsSettings() && it.Kind != approval.KindUnsubscribe {
		return "done"
	}
	return "sent"
}
