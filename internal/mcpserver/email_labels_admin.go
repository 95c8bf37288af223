package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/warnings"
)

// create_label, rename_label and delete_label (issue 27). Creating and
// renaming a label (with its colour and visibility, as Gmail has them)
// change only how the user's own mail is organised and can be changed
// back, so they run like modify_labels: no approval, audited, counted
// against ORGANIZE_LIMIT, DEV_MODE decided by the gate. Deleting a label
// strips it from every message that has it and cannot be undone, so it
// is gated: the first call writes a request naming the label (bound by its
// id and name) and showing, as warnings, how many messages and threads
// carry it now and which filters use it.

type emailCreateLabelIn struct {
	accountArg
	Name                  string `json:"name" jsonschema:"The label's name; nest with / (Projects/Acme)"`
	LabelListVisibility   string `json:"label_list_visibility,omitempty" jsonschema:"Shown in the label list: labelShow (default), labelShowIfUnread or labelHide"`
	MessageListVisibility string `json:"message_list_visibility,omitempty" jsonschema:"Shown on messages in the message list: show (default) or hide"`
	labelColourArgs
}

type emailRenameLabelIn struct {
	accountArg
	Label                 string `json:"label" jsonschema:"The user label to change, by name or id (see list_labels)"`
	NewName               string `json:"new_name,omitempty" jsonschema:"Its new name (omit to keep it)"`
	LabelListVisibility   string `json:"label_list_visibility,omitempty" jsonschema:"labelShow, labelShowIfUnread or labelHide (omit to keep it)"`
	MessageListVisibility string `json:"message_list_visibility,omitempty" jsonschema:"show or hide (omit to keep it)"`
	labelColourArgs
}

// labelColourArgs are a label's colours (create_label, rename_label),
// given together: Gmail sets both (labelSpec checks it).
type labelColourArgs struct {
	TextColor       string `json:"text_color,omitempty" jsonschema:"Text colour, #rrggbb from Gmail's label palette; give with background_color"`
	BackgroundColor string `json:"background_color,omitempty" jsonschema:"Background colour, #rrggbb from Gmail's label palette; give with text_color"`
}

type emailDeleteLabelIn struct {
	accountArg
	Label string `json:"label" jsonschema:"The user label to delete, by name or id (see list_labels)"`
}

var (
	labelListVisibilities   = []string{"labelShow", "labelShowIfUnread", "labelHide"}
	messageListVisibilities = []string{"show", "hide"}
)

// labelSchema names the visibilities in the schema.
func labelSchema(s *jsonschema.Schema) {
	enumSchema("label_list_visibility", labelListVisibilities...)(s)
	enumSchema("message_list_visibility", messageListVisibilities...)(s)
}

// labelSpec checks the visibility and colour arguments (names as Gmail
// spells them; both colours or neither, lower-cased).
func labelSpec(name, llv, mlv string, c labelColourArgs) (gmail.LabelSpec, error) {
	s := gmail.LabelSpec{Name: strings.TrimSpace(name), LabelListVisibility: llv, MessageListVisibility: mlv,
		TextColor: strings.ToLower(strings.TrimSpace(c.TextColor)), BgColor: strings.ToLower(strings.TrimSpace(c.BackgroundColor))}
	if llv != "" && !slices.Contains(labelListVisibilities, llv) {
		return s, invalidField("label_list_visibility", "label_list_visibility is labelShow, labelShowIfUnread or labelHide")
	}
	if mlv != "" && !slices.Contains(messageListVisibilities, mlv) {
		return s, invalidField("message_list_visibility", "message_list_visibility is show or hide")
	}
	if (s.TextColor == "") != (s.BgColor == "") {
		return s, invalidField("text_color", "give text_color and background_color together (Gmail sets both)")
	}
	if strings.ContainsAny(s.Name, "\r\n\t") || len(s.Name) > 225 {
		return s, invalidField("name", "a label name is one line of at most 225 characters")
	}
	return s, nil
}

func describeLabel(l gmail.LabelInfo) string {
	d := fmt.Sprintf("%q (id %s; label list: %s; message list: %s", l.Name, l.ID, valueOr(l.LabelListVisibility, "labelShow"), valueOr(l.MessageListVisibility, "show"))
	if l.BgColor != "" {
		d += fmt.Sprintf("; colour %s on %s", l.TextColor, l.BgColor)
	}
	return d + ")"
}

func valueOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (h *emailHandlers) createLabel(ctx context.Context, _ *mcp.CallToolRequest, in emailCreateLabelIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "create_label", "label:"+oneLine(in.Name), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		spec, err := labelSpec(in.Name, in.LabelListVisibility, in.MessageListVisibility, in.labelColourArgs)
		if err == nil && spec.Name == "" {
			err = invalidField("name", "name must not be empty")
		}
		if err != nil {
			return invalid(err)
		}
		var made gmail.LabelInfo
		out := h.organise(ctx, "create_label", approval.Request{Subject: "create label " + spec.Name, Body: fmt.Sprintf("%+v\n", spec)},
			"no label was created", func(ctx context.Context) error {
				made, err = h.gm.NewLabel(ctx, spec)
				return err
			})
		h.detail = "label " + oneLine(spec.Name)
		switch {
		case out.Status == gate.DevMode:
			return textResult(fmt.Sprintf("[DEV_MODE] Label creation logged but not made: %q.", spec.Name)), out
		case out.Status == gate.Sent:
			h.detail += "; " + made.ID
			return textResult("Label created: " + describeLabel(made) + "."), out
		case errors.Is(out.Err, gmail.ErrLabelExists):
			return errorResult(fmt.Sprintf("Error: a label named %q exists already (Gmail compares names without case); nothing was created.", spec.Name)), out
		}
		return organiseError("creating the label", out.Err), out
	})
}

// userLabel resolves a user label by id or name; system labels are
// refused (Gmail neither renames nor deletes them).
func (h *emailCall) userLabel(ctx context.Context, nameOrID string) (gmail.Label, error) {
	labels, err := h.gm.ListLabels(ctx)
	if err != nil {
		return gmail.Label{}, fmt.Errorf("listing labels: %s", userError(err))
	}
	id := findLabel(labels, nameOrID)
	if id == "" {
		return gmail.Label{}, invalidField("label", fmt.Sprintf("no label %q in this mailbox (list_labels lists them)", oneLine(nameOrID)))
	}
	for _, l := range labels {
		if l.ID == id && l.Type != "user" {
			return gmail.Label{}, invalidField("label", fmt.Sprintf("%s is a system label: Gmail does not rename or delete it", l.ID))
		}
		if l.ID == id {
			return l, nil
		}
	}
	return gmail.Label{}, invalidField("label", "no such label")
}

func (h *emailHandlers) renameLabel(ctx context.Context, _ *mcp.CallToolRequest, in emailRenameLabelIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "rename_label", "label:"+oneLine(in.Label), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		spec, err := labelSpec(in.NewName, in.LabelListVisibility, in.MessageListVisibility, in.labelColourArgs)
		if err == nil && spec == (gmail.LabelSpec{}) {
			err = invalidField("new_name", "nothing to change: give new_name, a visibility or the colours")
		}
		if err != nil {
			return invalid(err)
		}
		l, err := h.userLabel(ctx, in.Label)
		if err != nil {
			return invalidOrFailed(err)
		}
		var changed gmail.LabelInfo
		out := h.organise(ctx, "rename_label", approval.Request{Subject: "change label " + l.Name, Body: fmt.Sprintf("%s: %+v\n", l.ID, spec)},
			"no label was changed", func(ctx context.Context) error {
				changed, err = h.gm.PatchLabel(ctx, l.ID, spec)
				return err
			})
		h.detail = "label " + l.ID
		switch {
		case out.Status == gate.DevMode:
			return textResult(fmt.Sprintf("[DEV_MODE] Label change logged but not made: %s %q.", l.ID, l.Name)), out
		case out.Status == gate.Sent:
			return textResult(fmt.Sprintf("Label changed (was %q): %s.", l.Name, describeLabel(changed))), out
		case errors.Is(out.Err, gmail.ErrLabelExists):
			return errorResult(fmt.Sprintf("Error: a label named %q exists already; nothing was changed.", spec.Name)), out
		}
		return organiseError("changing the label", out.Err), out
	})
}

func (h *emailHandlers) deleteLabel(ctx context.Context, _ *mcp.CallToolRequest, in emailDeleteLabelIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "delete_label", "label:"+oneLine(in.Label), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		l, err := h.userLabel(ctx, in.Label)
		if err != nil {
			return invalidOrFailed(err)
		}
		// Reading what the deletion touches is a read: before the gate,
		// so a wrong label never writes a request.
		info, err := h.gm.GetLabel(ctx, l.ID)
		if err != nil {
			return failed("Error reading the label: " + userError(err))
		}
		ws := []warnings.Warning{{Code: "label-delete", Text: fmt.Sprintf("Label %q is on %d messages in %d threads now: deleting it removes it from all of them (the messages stay). This cannot be undone.",
			info.Name, info.MessagesTotal, info.ThreadsTotal)}}
		if filters, err := h.gm.ListFilters(ctx); err == nil {
			for _, f := range filters {
				if slices.Contains(f.Action.AddLabelIDs, l.ID) || slices.Contains(f.Action.RemoveLabelIDs, l.ID) {
					ws = append(ws, warnings.Warning{Code: "label-filter", Text: fmt.Sprintf("Filter %s uses this label (%s).", f.ID, filterSummary(f))})
				}
			}
		}
		req := approval.Request{Account: h.reqAccount, Kind: approval.KindLabelDelete, Target: "label:" + l.ID,
			Subject: fmt.Sprintf("delete label %q (%s)", l.Name, l.ID),
			Body: fmt.Sprintf("Delete the user label %q (id %s) from this mailbox.\nIt is removed from every message and thread that has it; the messages themselves stay.\nThis cannot be undone.\n",
				l.Name, l.ID)}
		return h.gatedSettings(ctx, "delete_label", req, ws, func(ctx context.Context) (gate.SendResult, error) {
			return gate.SendResult{}, h.gm.DeleteLabel(ctx, l.ID)
		})
	})
}
