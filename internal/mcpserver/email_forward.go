package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// forward_email sends a received message on, with its attachments, through
// the gate like a send: a forward puts a stranger's words and files out
// under the user's name, so the request file shows what is forwarded (the
// original's From, Date and Subject in the body the human reads, and each
// attachment by name and size) and the approval binds all of it.

type emailForwardIn struct {
	accountArg
	MessageID string `json:"message_id" jsonschema:"Gmail message ID of the message to forward (from search_email or read_email)"`
	emailRecipientArgs
	Note       string `json:"note,omitempty" jsonschema:"Your note, written above the forwarded message"`
	BodyFormat string `json:"body_format,omitempty" jsonschema:"text (default), markdown or html: markdown and html also send an HTML part"`
	emailSenderArgs
}

// forward sends message_id's text and attachments on, through the gate.
func (h *emailHandlers) forward(ctx context.Context, _ *mcp.CallToolRequest, in emailForwardIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "forward_email", audit.MaskAddress(in.To.first()), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return h.doForward(ctx, in)
	})
}

func (h *emailCall) doForward(ctx context.Context, in emailForwardIn) (*mcp.CallToolResult, gate.Outcome) {
	if err := in.checkTo(); err != nil {
		return invalid(err)
	}
	req := approval.Request{Account: h.reqAccount, Kind: approval.KindForward, ToList: in.To, Cc: in.Cc, Bcc: in.Bcc, MessageID: in.MessageID, Body: in.Note}
	// The ids, recipients and note are checked before Gmail is asked.
	err := req.Validate()
	if err != nil {
		return invalid(err)
	}
	if _, err := mailmsg.RenderBody(mailmsg.BodyFormat(in.BodyFormat), ""); err != nil {
		return invalid(&mailmsg.InvalidError{Field: "body_format", Value: in.BodyFormat, Err: err})
	}
	if err := h.setSender(ctx, &req, in.emailSenderArgs); err != nil {
		return invalid(err)
	}
	m, err := h.gm.Message(ctx, req.MessageID)
	if err != nil {
		return failed(readFailure(err, "Message", req.MessageID, "forwarding email"))
	}
	atts, err := h.originalAttachments(ctx, m)
	if err != nil {
		return failed("Error forwarding email: reading the attachments: " + userError(err))
	}
	fwd := mailmsg.Forward(mailmsg.Original{From: m.From, Date: m.Date, Subject: m.Subject, To: m.To, Cc: m.Cc,
		Text: m.Text, Attachments: atts}, in.Note)
	x, err := h.openExtras(in.BodyFormat, fwd.Body, nil, fwd.Attachments)
	if err != nil {
		return invalid(err)
	}
	req.Subject, req.Body = fwd.Subject, fwd.Body
	if req, err = x.bind(req); err != nil {
		return invalid(err)
	}
	// The forwarded text is a stranger's, and now part of what the human
	// approves: the gate's check of the whole request (gate.Run) holds it to
	// the same limits as any other.
	return h.submit(ctx, gate.Call{Tool: "forward_email", Request: req, Compose: h.composer(x, req, "", nil),
		Warnings: func(ctx context.Context) []warnings.Warning { return h.warnNew(ctx, req) },
		Original: func(context.Context) *approval.Original { return originalOf(m) }}) // email_original.go
}

// originalAttachments fetches the bytes of every named attachment of m, in
// order. Unnamed parts (inline images of the HTML, which a forward of the
// text does not show) are left out.
func (h *emailCall) originalAttachments(ctx context.Context, m *gmail.Message) ([]mailmsg.Attachment, error) {
	var out []mailmsg.Attachment
	for _, f := range m.Files {
		if f.Filename == "" {
			continue
		}
		data := f.Data
		if data == nil && f.ID != "" {
			var err error
			if data, err = h.gm.GetAttachment(ctx, m.ID, f.ID); err != nil {
				return nil, err
			}
		}
		out = append(out, mailmsg.Attachment{Name: f.Filename, ContentType: f.MimeType, Data: data})
	}
	return out, nil
}
