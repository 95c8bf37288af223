package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// Organising mail: list_labels (read-only), modify_labels and
// untrash_email. The last two change only the user's own mailbox, and every
// change they make can be undone (a label added can be removed, an
// untrashed message trashed again), so they run without approval; but each
// call is audited (one line, with its counts) and counted against
// ORGANIZE_LIMIT, its own rolling hourly limit held in the store like the
// send limit, so a runaway agent cannot reshuffle a mailbox unboundedly.
// DEV_MODE is decided by the gate (Gate.Direct): it logs and changes
// nothing. Trashing is trash_email, behind the approval gate; nothing
// deletes permanently.

// maxModifyIDs bounds message_ids in one modify_labels call: five of
// Gmail's batchModify chunks of 1000.
const maxModifyIDs = 5000

// The friendly actions of modify_labels, as label changes.
var labelActions = map[string]gmail.LabelChange{
	"archive":   {Remove: []string{"INBOX"}},
	"unarchive": {Add: []string{"INBOX"}},
	"read":      {Remove: []string{"UNREAD"}},
	"unread":    {Add: []string{"UNREAD"}},
	"star":      {Add: []string{"STARRED"}},
	"unstar":    {Remove: []string{"STARRED"}},
}

// gatedLabels are the system labels modify_labels never adds or removes,
// with the refusal's text: adding TRASH or SPAM takes mail out of the
// user's sight (one call could trash 5,000 messages without approval), so
// trashing goes through trash_email's gate; removing them is refused too,
// so the label tool is never a way around trash_email/untrash_email.
var gatedLabels = map[string]string{
	"TRASH": "modify_labels does not add or remove TRASH: use trash_email to move mail to the trash (it needs the user's approval) and untrash_email to take it out",
	"SPAM":  "modify_labels does not add or remove SPAM: marking mail as spam hides it like trashing does; use trash_email (it needs the user's approval) to remove mail, untrash_email to take it out of the trash",
}

type emailListLabelsIn struct{ accountArg }

type emailModifyLabelsIn struct {
	accountArg
	MessageIDs   []string `json:"message_ids,omitempty" jsonschema:"Gmail message IDs to change (give this or thread_id)"`
	ThreadID     string   `json:"thread_id,omitempty" jsonschema:"Gmail thread ID: change every message of the thread (give this or message_ids)"`
	AddLabels    []string `json:"add_labels,omitempty" jsonschema:"Labels to add, by name or id (see list_labels)"`
	RemoveLabels []string `json:"remove_labels,omitempty" jsonschema:"Labels to remove, by name or id (see list_labels)"`
	Actions      []string `json:"actions,omitempty" jsonschema:"Shortcuts: archive (remove INBOX), unarchive (add INBOX), read (remove UNREAD), unread (add UNREAD), star (add STARRED), unstar (remove STARRED)"`
}

type emailUntrashIn struct {
	accountArg
	MessageID string `json:"message_id,omitempty" jsonschema:"Gmail message ID to take out of the trash; give this or thread_id"`
	ThreadID  string `json:"thread_id,omitempty" jsonschema:"Gmail thread ID to take out of the trash whole; give this or message_id"`
}

// modifyLabelsSchema bounds message_ids and names the actions.
func modifyLabelsSchema(s *jsonschema.Schema) {
	s.Properties["message_ids"].MaxItems = ptr(maxModifyIDs)
	for _, name := range []string{"add_labels", "remove_labels"} {
		s.Properties[name].MaxItems = ptr(100)
	}
	actions := s.Properties["actions"]
	actions.MaxItems = ptr(len(labelActions))
	var names []any
	for _, n := range slices.Sorted(maps.Keys(labelActions)) {
		names = append(names, n)
	}
	actions.Items.Enum = names
}

func (h *emailHandlers) listLabels(ctx context.Context, _ *mcp.CallToolRequest, _ emailListLabelsIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "list_labels", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult {
		labels, err := h.gm.ListLabels(ctx)
		if err != nil {
			return errorResult("Error listing labels: " + userError(err))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d labels (name | id | type):\n", len(labels))
		for _, l := range labels {
			fmt.Fprintf(&b, "- %s | %s | %s\n", oneLine(l.Name), oneLine(l.ID), oneLine(l.Type))
		}
		return textResult(b.String())
	})
}

func (h *emailHandlers) modifyLabels(ctx context.Context, _ *mcp.CallToolRequest, in emailModifyLabelsIn) (*mcp.CallToolResult, any, error) {
	target := fmt.Sprintf("messages:%d", len(in.MessageIDs))
	if in.ThreadID != "" {
		target = "thread:" + oneLine(in.ThreadID)
	}
	return h.call(ctx, "modify_labels", target, func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		ids, threadID, err := messagesOrThread(in.MessageIDs, in.ThreadID)
		if err != nil {
			return invalid(err)
		}
		change, err := h.labelChange(ctx, in)
		if err != nil {
			return invalidOrFailed(err)
		}
		what := describeChange(change)
		var done int
		out := h.organise(ctx, "modify_labels", approval.Request{ThreadID: threadID, Subject: what,
			Body: "Messages: " + strings.Join(ids, ", ") + "\n"}, "no label was changed", func(ctx context.Context) error {
			if threadID != "" {
				msgs, err := h.gm.ModifyThread(ctx, threadID, change)
				done = len(msgs)
				return err
			}
			done, err = h.gm.ModifyMessages(ctx, ids, change)
			return err
		})
		h.detail = countOf(ids, threadID) + "; " + what
		if out.Status != gate.DevMode {
			h.detail += fmt.Sprintf("; %d done", done)
		}
		switch {
		case out.Status == gate.DevMode:
			return textResult(fmt.Sprintf("[DEV_MODE] Label change logged but not made (%s): %s.", countOf(ids, threadID), what)), out
		case out.Status == gate.Sent:
			on := fmt.Sprintf("%d messages", done)
			if done == 1 {
				on = "1 message"
			}
			if threadID != "" {
				on += " of thread " + threadID
			}
			return textResult(fmt.Sprintf("Labels changed on %s: %s.", on, what)), out
		}
		return organiseError("changing labels", out.Err), out
	})
}

func (h *emailHandlers) untrash(ctx context.Context, _ *mcp.CallToolRequest, in emailUntrashIn) (*mcp.CallToolResult, any, error) {
	target := "message:" + oneLine(in.MessageID)
	if in.ThreadID != "" {
		target = "thread:" + oneLine(in.ThreadID)
	}
	return h.call(ctx, "untrash_email", target, func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		var ids []string
		if in.MessageID != "" {
			ids = []string{in.MessageID}
		}
		ids, threadID, err := messagesOrThread(ids, in.ThreadID)
		if err != nil {
			return invalid(err)
		}
		var done int
		out := h.organise(ctx, "untrash_email", approval.Request{ThreadID: threadID, Subject: "untrash " + countOf(ids, threadID),
			Body: "Messages: " + strings.Join(ids, ", ") + "\n"}, "nothing was taken out of the trash", func(ctx context.Context) error {
			if threadID != "" {
				msgs, err := h.gm.UntrashThread(ctx, threadID)
				done = len(msgs)
				return err
			}
			_, err := h.gm.UntrashMessage(ctx, ids[0])
			if err == nil {
				done = 1
			}
			return err
		})
		h.detail = fmt.Sprintf("%s; %d untrashed", countOf(ids, threadID), done)
		switch {
		case out.Status == gate.DevMode:
			return textResult(fmt.Sprintf("[DEV_MODE] Untrash logged but not made (%s).", countOf(ids, threadID))), out
		case out.Status == gate.Sent && threadID != "":
			return textResult(fmt.Sprintf("Thread %s taken out of the trash (%d messages).", threadID, done)), out
		case out.Status == gate.Sent:
			return textResult(fmt.Sprintf("Message %s taken out of the trash.", ids[0])), out
		}
		return organiseError("taking out of the trash", out.Err), out
	})
}

// direct runs a write that needs no approval through the gate
// (Gate.Direct), so DEV_MODE is decided there: it logs req as kind with the
// note "<tool> in DEV_MODE: <notDone>", and do is never called.
func (h *emailHandlers) direct(ctx context.Context, tool string, kind approval.Kind, req approval.Request, notDone string, do gate.SendFunc) gate.Outcome {
	req.Kind = kind
	return h.d.Gate.Direct(ctx, gate.DirectCall{Tool: tool, Request: req, Note: tool + " in DEV_MODE: " + notDone, Do: do})
}

// organise is direct for an organising write (its kind is the tool): do
// first takes a slot of ORGANIZE_LIMIT (one per call, whatever the number
// of messages), so the limit holds across processes and restarts.
func (h *emailHandlers) organise(ctx context.Context, tool string, req approval.Request, notDone string, do func(context.Context) error) gate.Outcome {
	return h.direct(ctx, tool, approval.Kind(tool), req, notDone, func(ctx context.Context) (gate.SendResult, error) {
		if l := h.d.OrganizeLimiter; l != nil {
			if _, err := l.Reserve(ctx, time.Now(), "organize"); err != nil {
				return gate.SendResult{}, err
			}
		}
		return gate.SendResult{}, do(ctx)
	})
}

// invalidOrFailed answers a check that failed before the gate: a refused
// argument (*mailmsg.InvalidError) is invalid, anything else (Gmail could
// not be read) failed.
func invalidOrFailed(err error) (*mcp.CallToolResult, gate.Outcome) {
	if _, ok := errors.AsType[*mailmsg.InvalidError](err); ok {
		return invalid(err)
	}
	return failed("Error: " + err.Error())
}

// organiseError is the answer to a failed modify_labels or untrash_email.
func organiseError(doing string, err error) *mcp.CallToolResult {
	var limited *ratelimit.LimitError
	switch {
	case errors.As(err, &limited):
		return errorResult(fmt.Sprintf("Error: organise limit reached (%d organising calls per hour: modify_labels, untrash_email, create_label, rename_label, delete_filter; ORGANIZE_LIMIT). Next call available in %d minutes; nothing was changed.",
			limited.Limit, limited.RetryMinutes()))
	case errors.Is(err, gmail.ErrNotFound), errors.Is(err, gmail.ErrThreadNotFound):
		return errorResult("Error: message or thread not found or no longer accessible.")
	}
	return errorResult("Error " + doing + ": " + userError(err))
}

// messagesOrThread checks the target of an organising call: message ids
// (deduplicated, in order) or one thread id, never both.
func messagesOrThread(ids []string, threadID string) ([]string, string, error) {
	if strings.TrimSpace(threadID) != "" {
		if len(ids) > 0 {
			return nil, "", invalidField("message_ids", "give message_ids or thread_id, not both")
		}
		id, err := gmailID("thread_id", threadID)
		return nil, id, err
	}
	if len(ids) == 0 {
		return nil, "", invalidField("message_ids", "give message_ids or thread_id")
	}
	if len(ids) > maxModifyIDs {
		return nil, "", invalidField("message_ids", fmt.Sprintf("at most %d message ids per call, got %d", maxModifyIDs, len(ids)))
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, raw := range ids {
		id, err := gmailID("message_id", raw)
		if err != nil {
			return nil, "", err
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, "", nil
}

// labelChange resolves the call's labels (names or ids, case-insensitive
// names as Gmail compares them) and actions into one change of label ids.
// An unknown label is refused: labels are never created by the way.
func (h *emailCall) labelChange(ctx context.Context, in emailModifyLabelsIn) (gmail.LabelChange, error) {
	var ch gmail.LabelChange
	for _, a := range in.Actions {
		act, ok := labelActions[strings.ToLower(strings.TrimSpace(a))]
		if !ok {
			return ch, invalidField("actions", fmt.Sprintf("unknown action %q (archive, unarchive, read, unread, star, unstar)", oneLine(a)))
		}
		ch.Add = append(ch.Add, act.Add...)
		ch.Remove = append(ch.Remove, act.Remove...)
	}
	if len(in.AddLabels)+len(in.RemoveLabels) > 0 {
		labels, err := h.gm.ListLabels(ctx)
		if err != nil {
			return ch, fmt.Errorf("listing labels: %s", userError(err))
		}
		resolve := func(names []string, into *[]string) error {
			for _, n := range names {
				id := findLabel(labels, n)
				if id == "" {
					return invalidField("labels", fmt.Sprintf("no label %q in this mailbox (list_labels lists them; labels are not created by modify_labels)", oneLine(n)))
				}
				*into = append(*into, id)
			}
			return nil
		}
		if err := resolve(in.AddLabels, &ch.Add); err != nil {
			return ch, err
		}
		if err := resolve(in.RemoveLabels, &ch.Remove); err != nil {
			return ch, err
		}
	}
	ch.Add, ch.Remove = uniq(ch.Add), uniq(ch.Remove)
	for _, id := range slices.Concat(ch.Add, ch.Remove) {
		if msg, ok := gatedLabels[id]; ok {
			return ch, invalidField("labels", msg)
		}
	}
	for _, id := range ch.Add {
		if slices.Contains(ch.Remove, id) {
			return ch, invalidField("labels", fmt.Sprintf("label %s is both added and removed", id))
		}
	}
	if len(ch.Add) == 0 && len(ch.Remove) == 0 {
		return ch, invalidField("labels", "nothing to change: give add_labels, remove_labels or actions")
	}
	return ch, nil
}

func findLabel(labels []gmail.Label, nameOrID string) string {
	nameOrID = strings.TrimSpace(nameOrID)
	for _, l := range labels {
		if l.ID == nameOrID {
			return l.ID
		}
	}
	for _, l := range labels {
		if strings.EqualFold(l.Name, nameOrID) {
			return l.ID
		}
	}
	return ""
}

func uniq(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func describeChange(ch gmail.LabelChange) string {
	var parts []string
	if len(ch.Add) > 0 {
		parts = append(parts, "added "+strings.Join(ch.Add, ", "))
	}
	if len(ch.Remove) > 0 {
		parts = append(parts, "removed "+strings.Join(ch.Remove, ", "))
	}
	return strings.Join(parts, "; ")
}

func countOf(ids []string, threadID string) string {
	switch {
	case threadID != "":
		return "thread " + threadID
	case len(ids) == 1:
		return "1 message"
	}
	return fmt.Sprintf("%d messages", len(ids))
}

func invalidField(field, text string) error {
	return &mailmsg.InvalidError{Field: field, Text: text}
}
