package approval

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Actions on mail that already exists: sending a stored Gmail draft
// (send_draft) and moving a message or thread to Trash (trash_email). They
// use the same vault, ledger, claim and Done/ record as a send, with three
// differences, all decided here:
//
//   - What binds them is ids, not an address: a draft's id and the id of
//     the message that is its current content (Gmail gives a draft a new
//     message id on every edit, so an approval names one version of it),
//     or the id of the message or thread to trash. Request.Body is mailgate's
//     own description of what will be done (for a draft: every recipient,
//     the subject, the text, the HTML part's and each attachment's hash),
//     written by the tool from what Gmail holds, so content_sha256 binds
//     that too: a draft edited after the request, or a thread that grew,
//     is another request and needs its own approval.
//   - The human cannot correct them: what is sent is the draft as Gmail
//     holds it, what is trashed is named by id. An approval whose subject
//     or description was edited is refused (moved to Rejected/ with the
//     reason), never stretched.
//   - Trash leaves nothing in anyone's inbox, so it takes no slot of the
//     rolling send limit (Kind.CountsAsSend); each trash still needs its
//     own approval, and the backlog bounds (MaxPending) bound the requests.
//
// Neither kind is accepted in ModeRecipient by the contract's hand-written
// files alone: they must carry the ids (see actionBinding), and a draft's
// message id is its content version.
const (
	KindSendDraft Kind = "email_send_draft"
	KindTrash     Kind = "email_trash"
)

// IsAction reports the kinds that act on existing mail by id.
func (k Kind) IsAction() bool { return k == KindSendDraft || k == KindTrash || k.IsSettings() }

// CountsAsSend reports whether a request of this kind takes a slot of the
// rolling send limit: everything that puts an email in someone's inbox.
func (k Kind) CountsAsSend() bool {
	if spec, ok := settingsKinds[k]; ok { // kind_settings.go
		return spec.sends
	}
	return k != KindTrash
}

// Texts of an action's request file, in place of the email's.
const (
	// DraftMarker is the BodyMarker of a send_draft request.
	DraftMarker = "## The draft that will be sent (read from Gmail; edit the draft in Gmail, not here)"
	// TrashMarker is the BodyMarker of a trash request.
	TrashMarker = "## What will be moved to Trash (recoverable from Gmail's Trash for 30 days)"

	draftInstructions = "While this file is in Pending_Approval/: move it to Approved/ to allow this exact draft to be sent once, as shown (an edit here is refused: to change the email, edit the draft in Gmail and the agent asks again), or to Rejected/ to refuse it."
	trashInstructions = "While this file is in Pending_Approval/: move it to Approved/ to allow exactly this to be moved to Gmail's Trash once (nothing is deleted for good), or to Rejected/ to refuse it."
)

// markerFor is the line of a FormatV2 file of kind k after which its
// content starts.
func markerFor(k Kind) string {
	marker, _ := textsFor(k)
	return marker
}

// instructionsFor is what a new request file of kind k tells the human.
func instructionsFor(k Kind) string {
	_, instructions := textsFor(k)
	return instructions
}

// textsFor is the marker and the instructions of a request file of kind k.
func textsFor(k Kind) (marker, instructions string) {
	switch k {
	case KindSendDraft:
		return DraftMarker, draftInstructions
	case KindTrash:
		return TrashMarker, trashInstructions
	}
	if spec, ok := settingsKinds[k]; ok {
		return spec.marker, spec.instructions
	}
	return BodyMarker, Instructions
}

// isGmailID reports a Gmail-style identifier (drafts are "r" and digits,
// with a minus sign on some accounts): 1 to 128 of A-Z a-z 0-9 _ . -.
// A loop, not a regular expression: `{1,128}` compiles to 128 copies (1,700
// allocations at every start, the most of any package's initialisation).
func isGmailID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validateAction checks an action request: its ids (a draft: DraftID and
// MessageID; a trash: exactly one of MessageID and ThreadID), then the
// subject as one header line and the description's size and encoding, so
// its request file can be read back.
func (r Request) validateAction() error {
	ids := []struct{ field, v string }{{"draft_id", r.DraftID}, {"message_id", r.MessageID}}
	if r.Kind == KindTrash {
		if (r.MessageID == "") == (r.ThreadID == "") || r.DraftID != "" {
			return &ValidationError{Field: "message_id", Text: "Invalid request: give message_id or thread_id, not both"}
		}
		ids = []struct{ field, v string }{{"message_id", r.MessageID + r.ThreadID}}
	} else if r.ThreadID != "" {
		return &ValidationError{Field: "thread_id", Text: "Invalid request: a draft is named by draft_id"}
	}
	for _, id := range ids {
		if !isGmailID(id.v) {
			return &ValidationError{Field: id.field, Value: id.v, Text: fmt.Sprintf("Invalid %s %q", id.field, id.v)}
		}
	}
	return r.checkSubjectBody()
}

// checkSubjectBody checks an action's subject as one header line and its
// description's size and encoding, so its request file can be read back.
func (r Request) checkSubjectBody() error {
	if err := mailmsg.CheckHeaderValue("subject", r.Subject); err != nil {
		return &ValidationError{Field: "subject", Err: err, Text: err.Error()}
	}
	if len(r.Body) > mailmsg.MaxBodyBytes || !utf8.ValidString(r.Body) || !utf8.ValidString(r.Subject) {
		return &ValidationError{Field: "body", Text: fmt.Sprintf("the description is not valid UTF-8 or larger than %d bytes", mailmsg.MaxBodyBytes)}
	}
	return nil
}

// actionFields are an action's frontmatter lines after its type.
func actionFields(r Request) []kv {
	var kvs []kv
	switch {
	case r.Kind.IsSettings():
		kvs = append(kvs, kv{key: "target", value: r.Target, quoted: true})
	case r.Kind == KindSendDraft:
		kvs = append(kvs, kv{key: "draft_id", value: r.DraftID, quoted: true}, kv{key: "message_id", value: r.MessageID, quoted: true})
	case r.ThreadID != "":
		kvs = append(kvs, kv{key: "thread_id", value: r.ThreadID, quoted: true})
	default:
		kvs = append(kvs, kv{key: "message_id", value: r.MessageID, quoted: true})
	}
	return append(kvs, kv{key: "subject", value: r.Subject, quoted: true})
}

// actionSlug is the "recipient" part of an action's file name.
func actionSlug(r Request) string {
	switch {
	case r.Kind.IsSettings():
		return settingsSlug(r) // kind_settings.go
	case r.Kind == KindSendDraft:
		return slug("draft-"+r.DraftID, 40, "draft")
	case r.ThreadID != "":
		return slug("trash-thread-"+r.ThreadID, 40, "trash")
	}
	return slug("trash-"+r.MessageID, 40, "trash")
}

// actionBinding says how a file's ids differ from an action call's ("" when
// they agree): the draft and its content version, or what is trashed.
func actionBinding(p *parsedFile, r Request) string {
	if r.Kind.IsSettings() {
		return settingsBinding(p, r) // kind_settings.go
	}
	for _, f := range [...]struct{ name, file, call string }{
		{"draft", p.DraftID, r.DraftID},
		{"draft's content version (message_id)", p.MessageID, r.MessageID},
		{"thread", p.ThreadID, r.ThreadID},
	} {
		if got := strings.TrimSpace(f.file); got != f.call {
			return fmt.Sprintf("the %s was changed from %s to %s: an approval cannot change what it acts on", f.name, shown(f.call), shown(got))
		}
	}
	return ""
}

// actionEdited is the refusal of an action approval whose subject or
// description the human changed ("" when nothing was).
func actionEdited(k Kind, edited []string) string {
	if len(edited) == 0 || !k.IsAction() {
		return ""
	}
	what := "this action"
	if k == KindSendDraft {
		what = "the draft (edit the draft in Gmail instead; the agent's next call then asks for a new approval)"
	}
	return "the " + strings.Join(edited, " and ") + " was edited in the approval, which cannot change " + what
}

// ActionFiles lists the files in dir (DirApproved, DirDone, …) of requests
// acting on what r names (the same draft, message or thread, whatever its
// content), found by the name's id part and confirmed by the file's own
// ids: for send_draft, an approval of an earlier version of a draft, or the
// record of its sending. Only r's kind and ids are read.
func (v *Vault) ActionFiles(dir string, r Request) ([]Item, error) {
	names, err := readDirNames(filepath.Join(v.root, dir))
	if err != nil {
		return nil, err
	}
	tag := "_" + actionSlug(r) + "_"
	var out []Item
	for _, n := range names {
		if !candidateName(n) || !strings.Contains(n, tag) {
			continue
		}
		it, err := v.item(dir, n)
		if err != nil || it.Invalid != "" || it.Kind != r.Kind || strings.TrimSpace(it.DraftID) != r.DraftID {
			continue
		}
		if r.Kind.IsSettings() && strings.TrimSpace(it.Target) != r.Target {
			continue
		}
		if r.Kind == KindTrash && (strings.TrimSpace(it.MessageID) != r.MessageID || strings.TrimSpace(it.ThreadID) != r.ThreadID) {
			continue
		}
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ModTime.Before(out[j].ModTime) })
	return out, nil
}

// trashOutcomeText is the one sentence a trash's Done file says about itself.
func trashOutcomeText(r Request, o Outcome, errMsg string) string {
	what := "message " + r.MessageID
	if r.ThreadID != "" {
		what = "thread " + r.ThreadID
	}
	switch o.Status {
	case StatusSent:
		return fmt.Sprintf("Moved %s to Trash at %s. This file is the record; moving it does nothing.", what, o.SentAt.UTC().Format(time.RFC3339))
	case StatusFailed:
		return fmt.Sprintf("Not moved to Trash (%s): %s. This approval is used up; the agent's next identical call writes a new request.", what, errMsg)
	}
	return fmt.Sprintf("Outcome unknown (%s): %s. It may have been moved to Trash: check Gmail before approving it again. This approval is used up.", what, errMsg)
}
