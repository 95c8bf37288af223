package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Drafts beyond draft_email: list_drafts (read-only, paged like
// search_email) and update_draft (replaces a draft's content; nothing is
// sent, so it needs no approval, but it goes through Gate.Direct like
// draft_email, so DEV_MODE logs it and changes nothing). update_draft
// changes only drafts mailgate created (EmailDeps.Drafts, recorded by
// draft_email): a draft the user wrote in Gmail is theirs, and a change to
// it (a Bcc added) would leave with it when they send it from Gmail, no
// approval asked. Sending any draft is send_draft, behind the gate.

// draftNotMineText is update_draft's refusal of a draft mailgate did not
// create.
const draftNotMineText = "Error: draft %s was not created by mailgate (draft_email), so update_draft does not change it: " +
	"a draft the user wrote is theirs. Create a new draft with draft_email instead; sending any draft needs the user's approval (send_draft)."

// notMine answers update_draft's refusal when draftID is not a draft
// mailgate created (or the record cannot be read: refused, not assumed).
func (h *emailHandlers) notMine(ctx context.Context, draftID string) (*mcp.CallToolResult, bool) {
	if h.d.Drafts == nil {
		return errorResult(fmt.Sprintf(draftNotMineText, draftID)), true
	}
	mine, err := h.d.Drafts.Created(ctx, draftID)
	if err != nil {
		h.d.Logger.Warn("reading the drafts record", "err", err)
		return errorResult("Error: cannot tell whether mailgate created draft " + draftID + " (its record is unreadable), so it is not changed."), true
	}
	if !mine {
		return errorResult(fmt.Sprintf(draftNotMineText, draftID)), true
	}
	return nil, false
}

// recordDraft notes a draft draft_email created. A failure leaves the
// draft usable but not updatable by update_draft: logged, not fatal.
func (h *emailHandlers) recordDraft(ctx context.Context, id string) {
	if h.d.Drafts == nil {
		return
	}
	if err := h.d.Drafts.Record(ctx, id); err != nil {
		h.d.Logger.Warn("recording a created draft", "draft", id, "err", err)
	}
}

type emailListDraftsIn struct {
	accountArg
	Query      string `json:"query,omitempty" jsonschema:"Gmail search query to filter drafts (default: every draft)"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"Maximum number of drafts to return (1-50, default 5)"`
	PageToken  string `json:"page_token,omitempty" jsonschema:"The next page's token, from the last line of a previous list_drafts answer with the same query; omit for the first page"`
}

// emailUpdateDraftIn is draft_email's input (emailComposeIn: recipients,
// subject, body, body_format, attachments) and the draft to replace.
type emailUpdateDraftIn struct {
	DraftID string `json:"draft_id" jsonschema:"Gmail draft ID of a draft mailgate created (from draft_email)"`
	emailComposeIn
}

func (h *emailHandlers) listDrafts(ctx context.Context, _ *mcp.CallToolRequest, in emailListDraftsIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "list_drafts", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult { return h.doListDrafts(ctx, in) })
}

func (h *emailCall) doListDrafts(ctx context.Context, in emailListDraftsIn) *mcp.CallToolResult {
	max, refused := pageArgs(in.MaxResults, in.PageToken)
	if refused != nil {
		return refused
	}
	page, err := h.gm.ListDrafts(ctx, in.Query, max, in.PageToken)
	if err != nil {
		return pageFailure(err, "list again", "listing drafts")
	}
	next := nextPageLine("list_drafts", page.NextPageToken)
	if len(page.Drafts) == 0 {
		if strings.TrimSpace(in.Query) != "" {
			return textResult("No drafts found matching: " + in.Query + next)
		}
		return textResult("No drafts." + next)
	}
	noun := "drafts"
	if len(page.Drafts) == 1 {
		noun = "draft"
	}
	var b, entries strings.Builder
	fmt.Fprintf(&b, "Found %d %s:\n", len(page.Drafts), noun)
	// A draft may quote mail a stranger wrote (a reply's draft): fenced as
	// search_email's list is.
	for i, d := range page.Drafts {
		m := d.Message
		if m == nil {
			m = &gmail.Message{}
		}
		fmt.Fprintf(&entries, "\n%d. Draft ID: %s | To: %s | Subject: %s | Date: %s\n   Snippet: %s\n   Message ID: %s | Thread ID: %s\n",
			i+1, d.ID, oneLine(m.To), oneLine(m.Subject), oneLine(m.Date), oneLine(m.Snippet), m.ID, m.ThreadID)
	}
	b.WriteString(fence.Text(searchFenceWhat, entries.String()))
	b.WriteString(next)
	return textResult(b.String())
}

func (h *emailHandlers) updateDraft(ctx context.Context, _ *mcp.CallToolRequest, in emailUpdateDraftIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "update_draft", "draft:"+oneLine(in.DraftID), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		draftID, err := gmailID("draft_id", in.DraftID)
		if err != nil {
			return invalid(err)
		}
		if res, refused := h.notMine(ctx, draftID); refused {
			return res, gate.Outcome{Status: gate.Invalid, Err: errors.New("not a draft mailgate created")}
		}
		// The email is checked as draft_email checks it, by the same code.
		return h.checkEmail(ctx, in.emailComposeIn, func(ctx context.Context, req approval.Request, x extras) (*mcp.CallToolResult, gate.Outcome) {
			return h.doUpdateDraft(ctx, draftID, req, x)
		})
	})
}

func (h *emailCall) doUpdateDraft(ctx context.Context, draftID string, req approval.Request, x extras) (*mcp.CallToolResult, gate.Outcome) {
	// The draft is read first: it must exist, and a reply's draft keeps
	// its thread and threading headers when its content is replaced.
	d, err := h.gm.GetDraft(ctx, draftID)
	if errors.Is(err, gmail.ErrDraftNotFound) {
		return failed(fmt.Sprintf("Error: Draft ID %s not found (it may have been sent or deleted).", draftID))
	}
	if err != nil {
		return failed("Error reading draft: " + userError(err))
	}
	o, err := x.outgoing(req, req)
	if err != nil {
		return invalid(err)
	}
	threadID := ""
	if m := d.Message; m != nil && m.InReplyTo != "" {
		threadID, o.InReplyTo, o.References = m.ThreadID, m.InReplyTo, m.References
	}
	raw, err := mailmsg.Build(o)
	if err != nil {
		return invalid(err)
	}
	out := h.direct(ctx, "update_draft", "email_draft_update", req, "draft "+draftID+" was not changed", func(ctx context.Context) (gate.SendResult, error) {
		ref, err := h.gm.UpdateDraft(ctx, draftID, raw, threadID)
		return gate.SendResult{MessageID: ref.MessageID, ThreadID: ref.ThreadID}, err
	})
	switch {
	case out.Status == gate.DevMode:
		return textResult(fmt.Sprintf("[DEV_MODE] Draft update logged but not made. Draft ID: %s, To: %s, Subject: %s",
			draftID, audit.MaskAddress(req.Address()), oneLine(req.Subject))), out
	case out.Status == gate.Sent:
		return textResult(fmt.Sprintf("Draft %s updated. Review it in your Gmail drafts folder.", draftID)), out
	case errors.Is(out.Err, gmail.ErrDraftNotFound):
		return errorResult(fmt.Sprintf("Error: Draft ID %s not found (it may have been sent or deleted).", draftID)), out
	}
	return errorResult("Error updating draft: " + userError(out.Err)), out
}

// gmailID checks an id an agent hands back (a draft, message or thread id):
// Gmail's are short runs of letters, digits, '-' and '_'.
func gmailID(field, id string) (string, error) {
	id = strings.TrimSpace(id)
	bad := id == "" || len(id) > mailmsg.MaxIDBytes
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			bad = true
		}
	}
	if bad {
		return "", &mailmsg.InvalidError{Field: field, Text: fmt.Sprintf("invalid %s: give an id from a previous answer", field)}
	}
	return id, nil
}
