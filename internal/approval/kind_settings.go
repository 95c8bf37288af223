package approval

import (
	"fmt"
	"strings"
	"time"
)

// Gated changes that are not an email (issue 27): deleting a label,
// creating a filter, setting the vacation responder, unsubscribing from a
// mailing list. Each is an action (Kind.IsAction) with the same vault,
// ledger, claim and Done/ record as a send; what they share is decided
// here:
//
//   - What binds them is Request.Target (frontmatter `target`: the label
//     id, "filter", "vacation", or the message whose List-Unsubscribe is
//     used) and Request.Body, mailgate's own description of exactly what
//     will happen (a filter's every criterion and action, the responder's
//     subject, text, period and audience, where an unsubscribe goes). The
//     description is hashed into content_sha256, so anything else is
//     another request.
//   - The human cannot correct them: an approval whose subject or
//     description was edited is refused (moved to Rejected/ with the
//     reason), in both approval modes: recipient mode's looser match does
//     not apply to them (settingsBinding), since a hand-written
//     "gmail_filter_create" naming no filter would approve any filter.
//   - Only an unsubscribe takes a slot of the rolling send limit (it
//     sends an email, or a request, to a third party on the user's
//     behalf); settings changes take none, but each is still one approval,
//     claimed once, audited, recorded in Done/.
const (
	KindLabelDelete  Kind = "gmail_label_delete"
	KindFilterCreate Kind = "gmail_filter_create"
	KindVacation     Kind = "gmail_vacation_update"
	KindUnsubscribe  Kind = "email_unsubscribe"
)

// Targets of the settings kinds without an id.
const (
	TargetFilter   = "filter"
	TargetVacation = "vacation"
)

// settingsSpec is what differs between the settings kinds.
type settingsSpec struct {
	prefix       string // Target's form: "label:<id>", "filter", …
	marker       string // the line after which the description starts
	instructions string
	sends        bool // takes a slot of the send limit
}

var settingsKinds = map[Kind]settingsSpec{
	KindLabelDelete: {prefix: "label:",
		marker:       "## What will be deleted (cannot be undone)",
		instructions: "While this file is in Pending_Approval/: move it to Approved/ to allow exactly this label to be deleted once (it is removed from every message that has it; this cannot be undone), or to Rejected/ to refuse it. An edit here is refused."},
	KindFilterCreate: {prefix: TargetFilter,
		marker:       "## The filter that will be created (it acts on all future mail, silently, until deleted)",
		instructions: "While this file is in Pending_Approval/: move it to Approved/ to allow exactly this filter to be created once, or to Rejected/ to refuse it. An edit here is refused: the agent must ask again for another filter."},
	KindVacation: {prefix: TargetVacation,
		marker:       "## The vacation responder that will be set (it answers senders automatically)",
		instructions: "While this file is in Pending_Approval/: move it to Approved/ to allow exactly this responder (its subject, text, period and who it answers) to be set once, or to Rejected/ to refuse it. An edit here is refused: other text needs a new request."},
	KindUnsubscribe: {prefix: "message:", sends: true,
		marker:       "## Where the unsubscribe request goes (sent on your behalf)",
		instructions: "While this file is in Pending_Approval/: move it to Approved/ to allow exactly this unsubscribe request to be sent once, to the address or URL shown, or to Rejected/ to refuse it. An edit here is refused."},
}

// IsSettings reports the gated kinds that are not an email: label
// deletion, filter creation, the vacation responder, unsubscribe.
func (k Kind) IsSettings() bool {
	_, ok := settingsKinds[k]
	return ok
}

// validateSettings checks a settings request: its Target for its kind,
// then the subject and description as an action's.
func (r Request) validateSettings() error {
	spec := settingsKinds[r.Kind]
	ok := r.Target == spec.prefix
	if strings.HasSuffix(spec.prefix, ":") {
		id, has := strings.CutPrefix(r.Target, spec.prefix)
		ok = has && isGmailID(id) // kind_action.go
	}
	if !ok || r.To != "" || r.ThreadID != "" || r.MessageID != "" || r.DraftID != "" {
		return &ValidationError{Field: "target", Value: r.Target, Text: fmt.Sprintf("Invalid target %q for %s", r.Target, r.Kind)}
	}
	if strings.TrimSpace(r.Body) == "" {
		return &ValidationError{Field: "body", Text: "a settings request needs mailgate's description of what it does"}
	}
	return r.checkSubjectBody()
}

// settingsBinding says how a file's target or description differ from
// the call's ("" when they agree). Unlike a send's, both bind in either
// approval mode: the description is what the human approves and what is
// done, so it is compared whole (line endings normalised) and with the
// hash the file was issued with.
func settingsBinding(p *parsedFile, r Request) string {
	if got := strings.TrimSpace(p.Target); got != r.Target {
		return fmt.Sprintf("the target was changed from %s to %s: an approval cannot change what it acts on", shown(r.Target), shown(got))
	}
	if h := strings.TrimSpace(p.ContentSHA256); h != "" && !strings.EqualFold(h, r.SHA256()) {
		return "content_sha256 differs"
	}
	if p.Body != normalizeNewlines(r.Body) {
		return "the description was edited in the approval, which cannot change what is done (the agent's call must ask for it, as a new request)"
	}
	if p.Subject != r.Subject {
		return "the subject was edited in the approval, which cannot change what is done"
	}
	return ""
}

// settingsSlug is the "recipient" part of a settings request's file name.
func settingsSlug(r Request) string {
	what := map[Kind]string{KindLabelDelete: "delete-", KindFilterCreate: "create-", KindVacation: "set-", KindUnsubscribe: "unsubscribe-"}[r.Kind]
	return slug(what+r.Target, 40, "settings")
}

// settingsOutcomeText is the one sentence a settings request's Done file
// says about itself.
func settingsOutcomeText(r Request, o Outcome, errMsg string) string {
	what := r.Subject
	switch o.Status {
	case StatusSent:
		return fmt.Sprintf("Done at %s: %s. This file is the record; moving it does nothing.", o.SentAt.UTC().Format(time.RFC3339), what)
	case StatusFailed:
		return fmt.Sprintf("Not done (%s): %s. This approval is used up; the agent's next identical call writes a new request.", what, errMsg)
	}
	return fmt.Sprintf("Outcome unknown (%s): %s. It may have been done: check Gmail before approving it again. This approval is used up.", what, errMsg)
}
