package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/warnings"
)

// send_draft: a stored Gmail draft sent through the gate. The approval
// binds the draft's id and the id of the message that is its content now
// (Gmail changes it on every edit), and the request describes that content
// in full (draftView), so the human approves what is sent and a draft
// edited after the request needs a new approval. Right before drafts.send
// the draft is read once more: if it changed since the approval, nothing is
// sent (the approval is used up, and the agent is told to ask again). An
// edit in the one round trip between that read and the send cannot slip
// through either: drafts.send is given the approved bytes as the draft's
// content, so Gmail sends exactly those (the late edit is overwritten).

type emailSendDraftIn struct {
	accountArg
	DraftID string `json:"draft_id" jsonschema:"Gmail draft ID to send (from draft_email or list_drafts)"`
}

// draftChangedError: the draft was edited between the approval and the
// send. Nothing was sent (drafts.send was never called).
type draftChangedError struct{ id, approved, now string }

func (e *draftChangedError) Error() string {
	return fmt.Sprintf("draft %s was edited after it was approved (content version %s, now %s); nothing was sent: call send_draft again to ask for a new approval of the draft as it is now", e.id, e.approved, e.now)
}

func (e *draftChangedError) NeverReached() bool { return true }

func (h *emailHandlers) sendDraft(ctx context.Context, _ *mcp.CallToolRequest, in emailSendDraftIn) (*mcp.CallToolResult, any, error) {
	id := strings.TrimSpace(in.DraftID)
	return h.call(ctx, "send_draft", "draft:"+oneLine(id), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return h.doSendDraft(ctx, id)
	})
}

func (h *emailCall) doSendDraft(ctx context.Context, id string) (*mcp.CallToolResult, gate.Outcome) {
	ds := h.gm
	if err := (approval.Request{Kind: approval.KindSendDraft, DraftID: id, MessageID: "x"}).Validate(); err != nil {
		return invalid(err)
	}
	raw, ref, err := ds.DraftRaw(ctx, id)
	switch {
	case errors.Is(err, gmail.ErrDraftNotFound):
		return failed(h.draftGone(id))
	case err != nil:
		return failed("Error sending draft: " + userError(err))
	}
	view, err := parseDraft(raw)
	if err != nil {
		return failed("Error sending draft: " + err.Error())
	}
	if view.recipients() == 0 {
		return failed(fmt.Sprintf("Error: draft %s has no recipients (To, Cc or Bcc); add them with update_draft or in Gmail first. Nothing was sent.", id))
	}
	req := approval.Request{Account: h.reqAccount, Kind: approval.KindSendDraft, DraftID: ref.ID, MessageID: ref.MessageID,
		Subject: view.Subject, Body: view.describe(ref.ID, ref.MessageID)}
	res, out := h.submit(ctx, gate.Call{Tool: "send_draft", Request: req,
		Compose:  gate.Exactly(req, h.draftSend(ds, ref, raw, view)),
		Warnings: func(ctx context.Context) []warnings.Warning { return h.draftWarnings(ctx, view) },
	})
	if out.Status == gate.AwaitingApproval {
		res = errorResult(out.Message() + h.olderApprovals(req))
	}
	return res, out
}

// draftSend reads the draft once more and sends it only if it is still the
// approved version, and then sends raw, the approved content (read under
// ref.MessageID, the version the approval binds), not whatever the draft
// holds when Gmail gets the call. A reply's draft names its thread, so
// that it stays there; a new draft names none (its thread is its own
// message, which the content given replaces).
func (h *emailHandlers) draftSend(ds Mailbox, ref gmail.DraftRef, raw []byte, view *draftView) gate.SendFunc {
	threadID := ""
	if view.reply {
		threadID = ref.ThreadID
	}
	return func(ctx context.Context) (gate.SendResult, error) {
		_, now, err := ds.DraftRaw(ctx, ref.ID)
		if err != nil {
			return gate.SendResult{}, &gmail.SendError{Err: fmt.Errorf("reading the draft before sending it: %w", err)}
		}
		if now.MessageID != ref.MessageID {
			return gate.SendResult{}, &draftChangedError{id: ref.ID, approved: ref.MessageID, now: now.MessageID}
		}
		sent, err := ds.SendDraft(ctx, ref.ID, raw, threadID)
		if err != nil {
			return gate.SendResult{}, err
		}
		for _, l := range [][]string{view.To, view.Cc, view.Bcc} {
			for _, s := range l {
				if a, err := mail.ParseAddress(s); err == nil {
					h.sent.remember(a.Address)
				}
			}
		}
		return gate.SendResult{MessageID: sent.ID, ThreadID: sent.ThreadID}, nil
	}
}

// draftWarnings are the request's warnings about the draft's recipients:
// each address checked like a send's, and every one never written to.
func (h *emailCall) draftWarnings(ctx context.Context, view *draftView) []warnings.Warning {
	var addrs []string
	for _, s := range slices.Concat(view.To, view.Cc, view.Bcc) {
		if a, err := mail.ParseAddress(s); err == nil {
			addrs = append(addrs, a.Address)
		}
	}
	h.sent.prefetch(ctx, h.gm, addrs)
	var ws []warnings.Warning
	for _, f := range []struct {
		field string
		list  []string
	}{{"To", view.To}, {"Cc", view.Cc}, {"Bcc", view.Bcc}} {
		for _, s := range f.list {
			a, err := mail.ParseAddress(s)
			if err != nil {
				ws = append(ws, warnings.Warning{Text: f.field + ": mailgate could not read the address " + s + "; Gmail decides who receives it."})
				continue
			}
			ws = append(ws, warnings.Address(f.field, a.Address)...)
			ws = append(ws, warnings.DisplayName(f.field, s)...)
			ws = append(ws, h.sent.warn(ctx, h.gm, a.Address)...)
		}
	}
	return ws
}

// draftGone answers a draft Gmail no longer has: sent through mailgate
// (its Done/ record says when), or sent or deleted elsewhere.
func (h *emailHandlers) draftGone(id string) string {
	done, _ := h.d.Gate.Vault.ActionFiles(approval.DirDone, approval.Request{Kind: approval.KindSendDraft, DraftID: id})
	for i := len(done) - 1; i >= 0; i-- {
		it := done[i]
		if it.Status == approval.StatusSent {
			return fmt.Sprintf("Error: draft %s was already sent at %s (vault/%s/%s); a sent draft no longer exists. Nothing was sent.",
				id, it.SentAt.UTC().Format(time.RFC3339), approval.DirDone, it.Name)
		}
	}
	return fmt.Sprintf("Error: draft %s not found (it may have been sent or deleted). Nothing was sent.", id)
}

// olderApprovals tells the agent of approvals of earlier versions of the
// draft: they stay unused, because the draft changed after they were asked.
func (h *emailHandlers) olderApprovals(req approval.Request) string {
	items, _ := h.d.Gate.Vault.ActionFiles(approval.DirApproved, req)
	var b strings.Builder
	for _, it := range items {
		if strings.TrimSpace(it.MessageID) != req.MessageID {
			fmt.Fprintf(&b, "\nNote: vault/%s/%s approves an earlier version of this draft (content version %s); it cannot be used, because the draft was edited after it was requested.",
				approval.DirApproved, it.Name, strings.TrimSpace(it.MessageID))
		}
	}
	return b.String()
}
