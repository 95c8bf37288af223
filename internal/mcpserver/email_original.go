package mcpserver

import (
	"context"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gmail"
)

// The message a reply answers or a forward forwards is kept beside the
// request for the approver (approval.Original): the approval page shows it
// without asking Gmail, and the request file's notes name it.

// originalOf is what the approver is shown of m.
func originalOf(m *gmail.Message) *approval.Original {
	o := &approval.Original{MessageID: m.ID, From: m.From, Date: m.Date, Subject: m.Subject, To: m.To, Cc: m.Cc, Text: m.Text}
	for _, f := range m.Files {
		if f.Filename != "" {
			o.Attachments = append(o.Attachments, approval.OriginalFile{Name: f.Filename, Size: f.Size})
		}
	}
	return o
}

// replyOriginal reads the message a reply answers, when a request is
// written (gate.Call.Original): a reply reads only the headers it needs
// otherwise. A message that cannot be read leaves the request without it
// (the page says so), never without the request.
func (h *emailCall) replyOriginal(id string) func(context.Context) *approval.Original {
	return func(ctx context.Context) *approval.Original {
		m, err := h.gm.Message(ctx, id)
		if err != nil {
			h.d.Logger.Warn("reading the message a reply answers, for the approver", "message_id", id, "err", err)
			return nil
		}
		return originalOf(m)
	}
}
