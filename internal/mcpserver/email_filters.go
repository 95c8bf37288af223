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
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// list_filters, create_filter and delete_filter (issue 27). A filter acts
// on all future mail, silently, until it is deleted: it can forward it
// elsewhere, delete it (TRASH), hide it (SPAM, or archive it past the
// inbox). So creating one is gated: the request shows every criterion and
// every action in words, a forwarding address first and as a warning, and
// the approval binds them all (the description is hashed). Deleting a
// filter only stops it, and its answer shows what it was; it runs like
// modify_labels (audited, ORGANIZE_LIMIT). Filters need Google's
// gmail.settings.basic scope, which nothing else grants.

type emailListFiltersIn struct{ accountArg }

type emailCreateFilterIn struct {
	accountArg
	From          string   `json:"from,omitempty" jsonschema:"Criterion: the sender (an address, a domain or Gmail's from: syntax)"`
	To            string   `json:"to,omitempty" jsonschema:"Criterion: a recipient"`
	Subject       string   `json:"subject,omitempty" jsonschema:"Criterion: words in the subject"`
	Query         string   `json:"query,omitempty" jsonschema:"Criterion: a Gmail search query the message matches"`
	NegatedQuery  string   `json:"negated_query,omitempty" jsonschema:"Criterion: a Gmail search query the message does not match"`
	HasAttachment bool     `json:"has_attachment,omitempty" jsonschema:"Criterion: only messages with an attachment"`
	ExcludeChats  bool     `json:"exclude_chats,omitempty" jsonschema:"Criterion: leave chats out"`
	Size          int64    `json:"size,omitempty" jsonschema:"Criterion: a size in bytes, compared as size_comparison says"`
	SizeCompare   string   `json:"size_comparison,omitempty" jsonschema:"larger or smaller (with size)"`
	AddLabels     []string `json:"add_labels,omitempty" jsonschema:"Action: labels to add, by name or id (STARRED, IMPORTANT, TRASH deletes, SPAM hides)"`
	RemoveLabels  []string `json:"remove_labels,omitempty" jsonschema:"Action: labels to remove, by name or id (INBOX archives, UNREAD marks read)"`
	Forward       string   `json:"forward,omitempty" jsonschema:"Action: forward every matching email to this address (a forwarding address verified in Gmail's settings)"`
}

type emailDeleteFilterIn struct {
	accountArg
	FilterID string `json:"filter_id" jsonschema:"The filter's id (see list_filters)"`
}

func createFilterSchema(s *jsonschema.Schema) {
	enumSchema("size_comparison", "larger", "smaller")(s)
	for _, k := range []string{"add_labels", "remove_labels"} {
		s.Properties[k].MaxItems = ptr(20)
	}
}

// filterEffects say in words what a system label does in a filter's
// action, for the request and list_filters.
var filterEffects = map[string]string{
	"+TRASH":     "DELETE it (move it to Trash)",
	"+SPAM":      "HIDE it as spam",
	"-INBOX":     "archive it (skip the inbox)",
	"-UNREAD":    "mark it as read",
	"+STARRED":   "star it",
	"+IMPORTANT": "mark it as important",
	"-IMPORTANT": "never mark it as important",
	"-SPAM":      "never send it to spam",
}

func (h *emailHandlers) listFilters(ctx context.Context, _ *mcp.CallToolRequest, _ emailListFiltersIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "list_filters", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult {
		filters, err := h.gm.ListFilters(ctx)
		if err != nil {
			return errorResult("Error listing filters: " + userError(err))
		}
		names := h.labelNames(ctx)
		var b strings.Builder
		fmt.Fprintf(&b, "%d filters:\n", len(filters))
		for _, f := range filters {
			fmt.Fprintf(&b, "- %s: %s\n", f.ID, filterSummaryNamed(f, names))
		}
		return textResult(b.String())
	})
}

// labelNames maps label ids to names ("" map when they cannot be read).
func (h *emailCall) labelNames(ctx context.Context) map[string]string {
	out := map[string]string{}
	labels, err := h.gm.ListLabels(ctx)
	if err != nil {
		return out
	}
	for _, l := range labels {
		out[l.ID] = l.Name
	}
	return out
}

func filterSummary(f gmail.Filter) string { return filterSummaryNamed(f, nil) }

// filterSummaryNamed is a filter on one line: "if <criteria>: <actions>".
func filterSummaryNamed(f gmail.Filter, names map[string]string) string {
	return "if " + strings.Join(criteriaLines(f.Criteria), " and ") + ": " + strings.Join(actionLines(f.Action, names), "; ")
}

func criteriaLines(c gmail.FilterCriteria) []string {
	var out []string
	add := func(name, v string) {
		if v != "" {
			out = append(out, fmt.Sprintf("%s %q", name, v))
		}
	}
	add("from", c.From)
	add("to", c.To)
	add("subject", c.Subject)
	add("matches", c.Query)
	add("does not match", c.NegatedQuery)
	if c.HasAttachment {
		out = append(out, "has an attachment")
	}
	if c.ExcludeChats {
		out = append(out, "is not a chat")
	}
	if c.Size > 0 {
		out = append(out, fmt.Sprintf("size %s than %d bytes", valueOr(c.SizeComparison, "larger"), c.Size))
	}
	return out
}

func actionLines(a gmail.FilterAction, names map[string]string) []string {
	var out []string
	if a.Forward != "" {
		out = append(out, "FORWARD it to "+a.Forward)
	}
	label := func(sign, id string) string {
		if e, ok := filterEffects[sign+id]; ok {
			return e
		}
		n := id
		if names[id] != "" && names[id] != id {
			n = fmt.Sprintf("%q (%s)", names[id], id)
		}
		if sign == "+" {
			return "add label " + n
		}
		return "remove label " + n
	}
	for _, id := range a.AddLabelIDs {
		out = append(out, label("+", id))
	}
	for _, id := range a.RemoveLabelIDs {
		out = append(out, label("-", id))
	}
	return out
}

func (h *emailHandlers) createFilter(ctx context.Context, _ *mcp.CallToolRequest, in emailCreateFilterIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "create_filter", approval.TargetFilter, func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		f, names, err := h.filterFrom(ctx, in)
		if err != nil {
			return invalidOrFailed(err)
		}
		var ws []warnings.Warning
		var b strings.Builder
		if f.Action.Forward != "" {
			ws = append(ws, warnings.Warning{Code: "filter-forward", Text: fmt.Sprintf("This filter FORWARDS every matching email to %s, outside this mailbox, silently, until the filter is deleted.", f.Action.Forward)})
			ws = append(ws, warnings.Address("Forward", f.Action.Forward)...)
			fmt.Fprintf(&b, "WARNING: every matching email will be FORWARDED to %s.\n\n", f.Action.Forward)
		}
		for _, id := range f.Action.AddLabelIDs {
			if id == "TRASH" || id == "SPAM" {
				ws = append(ws, warnings.Warning{Code: "filter-hides", Text: fmt.Sprintf("This filter will %s every matching email as it arrives: the user will not see it in the inbox.", filterEffects["+"+id])})
			}
		}
		b.WriteString("Create a Gmail filter. For every email that arrives from now on and matches:\n")
		for _, l := range criteriaLines(f.Criteria) {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("Gmail will:\n")
		for _, l := range actionLines(f.Action, names) {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("It acts silently until it is deleted (delete_filter, or Gmail's settings).\n")
		subject := "create filter: " + filterSummaryNamed(f, names)
		if len(subject) > 200 {
			subject = subject[:200] + "…"
		}
		req := approval.Request{Account: h.reqAccount, Kind: approval.KindFilterCreate, Target: approval.TargetFilter, Subject: headerLine(subject), Body: b.String()}
		return h.gatedSettings(ctx, "create_filter", req, ws, func(ctx context.Context) (gate.SendResult, error) {
			made, err := h.gm.CreateFilter(ctx, f)
			return gate.SendResult{MessageID: made.ID}, err
		})
	})
}

// filterFrom checks the call's criteria and actions and resolves label
// names to ids (an unknown label is refused: filters never create one).
func (h *emailCall) filterFrom(ctx context.Context, in emailCreateFilterIn) (gmail.Filter, map[string]string, error) {
	c := gmail.FilterCriteria{From: strings.TrimSpace(in.From), To: strings.TrimSpace(in.To), Subject: strings.TrimSpace(in.Subject),
		Query: strings.TrimSpace(in.Query), NegatedQuery: strings.TrimSpace(in.NegatedQuery),
		HasAttachment: in.HasAttachment, ExcludeChats: in.ExcludeChats, Size: in.Size, SizeComparison: in.SizeCompare}
	for _, v := range []struct{ field, v string }{{"from", c.From}, {"to", c.To}, {"subject", c.Subject}, {"query", c.Query}, {"negated_query", c.NegatedQuery}} {
		if err := mailmsg.CheckHeaderValue(v.field, v.v); err != nil || len(v.v) > 1000 {
			return gmail.Filter{}, nil, invalidField(v.field, v.field+" must be one line of at most 1000 characters")
		}
	}
	if c.Size < 0 || (c.Size > 0) != (c.SizeComparison != "") {
		return gmail.Filter{}, nil, invalidField("size", "give size (bytes) with size_comparison (larger or smaller)")
	}
	if len(criteriaLines(c)) == 0 || (c.ExcludeChats && len(criteriaLines(c)) == 1) {
		return gmail.Filter{}, nil, invalidField("from", "a filter needs a criterion: from, to, subject, query, negated_query, has_attachment or size")
	}
	a := gmail.FilterAction{Forward: strings.TrimSpace(in.Forward)}
	if a.Forward != "" {
		addr, err := mailmsg.ParseAddress(a.Forward)
		if err != nil || addr.Name != "" {
			return gmail.Filter{}, nil, invalidField("forward", "forward is one plain address (a@b.c)")
		}
		a.Forward = addr.Address
		if err := h.checkForwarding(ctx, a.Forward); err != nil { // email_forwarding.go
			return gmail.Filter{}, nil, err
		}
	}
	names := map[string]string{}
	if len(in.AddLabels)+len(in.RemoveLabels) > 0 {
		labels, err := h.gm.ListLabels(ctx)
		if err != nil {
			return gmail.Filter{}, nil, fmt.Errorf("listing labels: %s", userError(err))
		}
		for _, l := range labels {
			names[l.ID] = l.Name
		}
		for _, side := range []struct {
			in  []string
			out *[]string
		}{{in.AddLabels, &a.AddLabelIDs}, {in.RemoveLabels, &a.RemoveLabelIDs}} {
			for _, n := range side.in {
				id := findLabel(labels, n)
				if id == "" {
					return gmail.Filter{}, nil, invalidField("labels", fmt.Sprintf("no label %q in this mailbox (create_label makes one; list_labels lists them)", oneLine(n)))
				}
				if !slices.Contains(*side.out, id) {
					*side.out = append(*side.out, id)
				}
			}
		}
	}
	if len(a.AddLabelIDs)+len(a.RemoveLabelIDs) == 0 && a.Forward == "" {
		return gmail.Filter{}, nil, invalidField("add_labels", "a filter needs an action: add_labels, remove_labels or forward")
	}
	for _, id := range a.AddLabelIDs {
		if slices.Contains(a.RemoveLabelIDs, id) {
			return gmail.Filter{}, nil, invalidField("labels", fmt.Sprintf("label %s is both added and removed", id))
		}
	}
	return gmail.Filter{Criteria: c, Action: a}, names, nil
}

func (h *emailHandlers) deleteFilter(ctx context.Context, _ *mcp.CallToolRequest, in emailDeleteFilterIn) (*mcp.CallToolResult, any, error) {
	id := strings.TrimSpace(in.FilterID)
	return h.call(ctx, "delete_filter", "filter:"+oneLine(id), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		if _, err := gmailID("filter_id", id); err != nil {
			return invalid(err)
		}
		// What the filter was goes in the answer and the audit line, so it
		// can be made again (create_filter, with the user's approval).
		filters, err := h.gm.ListFilters(ctx)
		if err != nil {
			return failed("Error listing filters: " + userError(err))
		}
		i := slices.IndexFunc(filters, func(f gmail.Filter) bool { return f.ID == id })
		if i < 0 {
			return failed(fmt.Sprintf("Error: no filter %s in this mailbox (list_filters lists them). Nothing was deleted.", id))
		}
		was := filterSummaryNamed(filters[i], h.labelNames(ctx))
		out := h.organise(ctx, "delete_filter", approval.Request{Subject: "delete filter " + id, Body: was + "\n"},
			"no filter was deleted", func(ctx context.Context) error {
				return h.gm.DeleteFilter(ctx, id)
			})
		h.detail = "filter " + id + ": " + oneLine(was)
		switch out.Status {
		case gate.DevMode:
			return textResult(fmt.Sprintf("[DEV_MODE] Filter deletion logged but not made: %s (%s).", id, was)), out
		case gate.Sent:
			return textResult(fmt.Sprintf("Filter %s deleted. It was: %s. Making it again needs create_filter and the user's approval.", id, was)), out
		}
		if errors.Is(out.Err, gmail.ErrFilterNotFound) {
			return errorResult(fmt.Sprintf("Error: filter %s is gone already. Nothing was deleted.", id)), out
		}
		return organiseError("deleting the filter", out.Err), out
	})
}
