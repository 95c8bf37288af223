package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/tmux"
)

// The mailbox tool set (MAILGATE_TOOLS=mailbox): exactly the four tools of
// the tmux agent-mail CLI's stdio server — send, receive, status,
// list-recipients — with its answers and error texts. The logic (identity,
// recipients, .agentmailignore) is mailboxset.Caller's, which `mailgate
// mailbox` calls too; these are its MCP adapters. The tools are listed in
// the inventory (inventory.go).

type mbSendIn struct {
	Recipient string `json:"recipient" jsonschema:"the recipient's name (its tmux window name); see list-recipients"`
	Message   string `json:"message" jsonschema:"the message text (at most 65536 bytes)" maxLength:"65536"`
}

type mbEmptyIn struct{}

type mbStatusIn struct {
	Status string `json:"status" jsonschema:"ready, work or offline"`
}

// mbTools adapts a mailboxset.Caller to MCP.
type mbTools struct{ c *mailboxset.Caller }

func newMBTools(svc *agentmail.Service, st mailboxset.Store, co SetOptions) *mbTools {
	o := co.withDefaultsButProject()
	return &mbTools{c: mailboxset.NewCaller(svc, st, tmux.Client{Getenv: o.Getenv}, mailboxset.CallerOptions{
		ProjectKey: o.ProjectKey, DefaultProjectKey: func() string { return defaultProjectKey(o.Dir) }, AgentName: o.AgentName, Getenv: o.Getenv,
	})}
}

func (t *mbTools) send(ctx context.Context, in mbSendIn) (*mcp.CallToolResult, error) {
	id, err := t.c.Send(ctx, in.Recipient, in.Message)
	if errors.Is(err, mailboxset.ErrTooLarge) {
		// FR-013: a JSON-RPC error, not a tool answer.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	return sentenceResult(fmt.Sprintf("Message #%d sent", id), map[string]any{"message_id": fmt.Sprint(id)}), nil
}

func (t *mbTools) receive(ctx context.Context, _ mbEmptyIn) (*mcp.CallToolResult, error) {
	msg, ok, err := t.c.Receive(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return sentenceResult("No unread messages", map[string]any{"status": "No unread messages"}), nil
	}
	return jsonResult(msg)
}

func (t *mbTools) status(ctx context.Context, in mbStatusIn) (*mcp.CallToolResult, error) {
	if err := t.c.SetStatus(ctx, in.Status); err != nil {
		return nil, err
	}
	return jsonResult(map[string]string{"status": "ok"})
}

func (t *mbTools) listRecipients(ctx context.Context, _ mbEmptyIn) (*mcp.CallToolResult, error) {
	rs, err := t.c.Recipients(ctx)
	if err != nil {
		return nil, err
	}
	return jsonResult(struct {
		Recipients []mailboxset.Recipient `json:"recipients"`
	}{Recipients: rs})
}
