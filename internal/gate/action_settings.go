package gate

import (
	"fmt"

	"github.com/mailgate/mailgate/internal/approval"
)

// The gated changes that are not an email (approval.Kind.IsSettings:
// delete_label, create_filter, set_vacation, unsubscribe) run through Run
// like trash: one approval each, claimed once before Gmail (or the
// unsubscribe URL) is called, recorded in Done/, audited. Only unsubscribe
// takes a slot of the send limit (approval.Kind.CountsAsSend): it sends an
// email or a request to a third party on the user's behalf; the settings
// changes send nothing themselves, and each is already one human approval.

// settingsWords name each kind in the agent's texts; what is the request's
// subject (mailgate's one-line summary, e.g. "delete label \"Old\"").
var settingsWords = map[approval.Kind]actionWords{
	approval.KindLabelDelete:  {tool: "delete_label", done: "deleted", failed: "Error deleting label: "},
	approval.KindFilterCreate: {tool: "create_filter", done: "created", failed: "Error creating filter: "},
	approval.KindVacation:     {tool: "set_vacation", done: "set", failed: "Error setting the vacation responder: "},
	approval.KindUnsubscribe:  {tool: "unsubscribe", done: "sent", failed: "Error unsubscribing: "},
}

// settingsDone is the answer once a settings change was made. Result's
// MessageID carries the id Gmail gave what was made (a filter's id), or
// the unsubscribe email's message id.
func settingsDone(o Outcome) string {
	msg := "Done, as the user approved: " + o.Request.Subject + "."
	if id := o.Result.MessageID; id != "" {
		switch o.Kind {
		case approval.KindFilterCreate:
			msg += " Filter ID: " + id
		case approval.KindUnsubscribe:
			msg += " Message ID: " + id
		}
	}
	if o.DoneFile != "" {
		msg += fmt.Sprintf(" (vault/%s/%s is the record.)", approval.DirDone, o.DoneFile)
	}
	return msg
}
