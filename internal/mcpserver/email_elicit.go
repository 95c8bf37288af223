package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ctxkey"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/warnings"
)

// Optional approval in the client (APPROVAL_ELICIT=true, off by default):
// when a gated email has no approval yet and the MCP client declared the
// elicitation capability, the server asks the human in the client, with
// the full email and its warnings, whether to send it once. Accept (with
// the box ticked) approves the request file exactly as a file move does
// (approval.Vault.ApproveAs, decided_via naming the client's question) and
// the call goes through the gate again; decline, cancel, an error or a
// timeout is no, and the request waits in Pending_Approval/ as always.
// Off by default because some clients let a hook or an auto-approve setting
// answer elicitations without the human: then the agent's side would
// approve its own email.

// DefaultElicitTimeout is how long the client's question waits.
const DefaultElicitTimeout = 5 * time.Minute

var elicitSessionKey = ctxkey.New[*mcp.ServerSession]("mcpserver.elicitSession")

// withElicitSession keeps the calling session in ctx for the question.
func withElicitSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return elicitSessionKey.With(ctx, ss)
}

func sessionFrom(ctx context.Context) *mcp.ServerSession {
	return elicitSessionKey.Value(ctx)
}

// elicitApproval asks the human in the client about the request out left
// waiting, and reports whether they approved it (and it was moved).
func (h *emailHandlers) elicitApproval(ctx context.Context, out gate.Outcome) bool {
	if !h.d.Elicit || out.Status != gate.AwaitingApproval || out.Pending == nil || h.d.Gate == nil || h.d.Gate.Vault == nil {
		return false
	}
	ss := sessionFrom(ctx)
	if ss == nil {
		return false
	}
	if ip := ss.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	v := h.d.Gate.Vault
	it, err := v.Resolve(out.Pending.Name, approval.DirPending)
	if err != nil || it.Name != out.Pending.Name {
		return false
	}
	data, err := os.ReadFile(it.Path)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(data)
	timeout := h.d.ElicitTimeout
	if timeout <= 0 {
		timeout = DefaultElicitTimeout
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := ss.Elicit(ectx, &mcp.ElicitParams{Message: elicitText(it), RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{"approve": map[string]any{"type": "boolean", "title": "Send this email once, exactly as shown",
			"default": false}},
		"required": []string{"approve"},
	}})
	answer := "no answer"
	switch {
	case err != nil:
		answer = "no answer: " + err.Error()
	case res.Action != "accept":
		answer = res.Action
	case res.Content["approve"] != true:
		answer = "accepted without approving"
	default:
		answer = ""
	}
	entry := audit.Entry{Time: time.Now(), CorrelationID: audit.CorrelationID(ctx), Tool: "approval_elicit", ActionType: string(it.Kind),
		Target: audit.MaskAddress(strings.Join(it.ToList, ", ")), ApprovalFile: approval.DirPending + "/" + it.Name,
		ApprovalSHA256: hex.EncodeToString(sum[:]), PID: os.Getpid()}
	if answer != "" {
		entry.Result, entry.Detail = "rejected", "not approved in the client: "+answer
		h.record(entry)
		return false
	}
	_, err = v.ApproveAs(it.Name, approval.Decision{Via: approval.ViaElicit, From: approval.DirPending, FileSHA256: entry.ApprovalSHA256})
	if err != nil {
		entry.Result, entry.Detail = "error", "approved in the client, but the request could not be moved: "+err.Error()
		h.record(entry)
		return false
	}
	entry.Result, entry.Detail = "success", "approved on "+approval.ViaElicit
	h.record(entry)
	return true
}

func (h *emailHandlers) record(e audit.Entry) {
	if h.d.Audit != nil {
		_ = h.d.Audit.Record(e)
	}
}

// elicitText is the question: the email as the request file holds it.
func elicitText(it *approval.Item) string {
	var b strings.Builder
	switch it.Kind {
	case approval.KindTrash:
		b.WriteString("An agent asks to move mail to Trash. Allow it once, exactly as shown?\n\n")
	case approval.KindSendDraft:
		b.WriteString("An agent asks to send a Gmail draft. Send it once, exactly as shown?\n\n")
	default:
		b.WriteString("An agent asks to send this email. Send it once, exactly as shown?\n\n")
	}
	if it.Account != "" {
		fmt.Fprintf(&b, "Account: %s (the Gmail account it is sent or done from)\n", warnings.Escape(it.Account))
	}
	if it.From != "" {
		fmt.Fprintf(&b, "From: %s\n", warnings.Escape(it.From))
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"To", it.ToList}, {"Cc", it.Cc}, {"Bcc", it.Bcc}, {"Attached", it.Attachments}} {
		for _, a := range l.list {
			fmt.Fprintf(&b, "%s: %s\n", l.name, warnings.Escape(strings.TrimSpace(a)))
		}
	}
	if it.ThreadID != "" {
		fmt.Fprintf(&b, "Reply in thread %s\n", it.ThreadID)
	}
	fmt.Fprintf(&b, "Subject: %s\n", warnings.Escape(it.Subject))
	if it.HTMLSHA256 != "" {
		b.WriteString(approval.HTMLDescription(it.HTMLFrom) + "\n")
		for _, l := range approval.HTMLLinkLines(it.HTMLLinks) {
			b.WriteString(warnings.Escape(l) + "\n")
		}
	}
	if ws := it.CurrentWarnings(); len(ws) > 0 {
		fmt.Fprintf(&b, "\nWARNINGS (%d):\n", len(ws))
		for _, w := range ws {
			b.WriteString("! " + w + "\n")
		}
	}
	b.WriteString("\nBody (hidden characters shown as ⟨…⟩):\n")
	b.WriteString(warnings.Escape(it.Body))
	return b.String()
}
