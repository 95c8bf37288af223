package mcpserver

import (
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
)

// TestOriginalKeptForReplyAndForward: the request of a reply keeps the
// message it answers, and a forward's what it forwards (its From, Date,
// Subject, text and attachments by name and size), read from Gmail by the
// server when it writes the request, so the approval page shows them
// without Gmail.
func TestOriginalKeptForReplyAndForward(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, false, nil)
	msg, thread := insertInvoice(t, e)
	v, err := approval.Open(e.vault, approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"reply_email", map[string]any{"thread_id": thread, "message_id": msg, "body": "Paid."}},
		{"forward_email", map[string]any{"message_id": msg, "to": "accounts@example.com", "note": "For payment."}},
	} {
		_, file := request(t, e, c.tool, c.args)
		it, err := v.Resolve(file, approval.DirPending)
		if err != nil {
			t.Fatal(err)
		}
		o, err := v.Original(it)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if o.MessageID != msg || o.From != "Vendor <vendor@example.org>" || o.Subject != "Invoice 7" || o.Date != "Tue, 10 Nov 2026 09:30:00 +0000" ||
			o.Cc != "Ops <ops@example.org>" || o.Text != "Please pay invoice 7 to our NEW account.\n" ||
			len(o.Attachments) != 1 || o.Attachments[0] != (approval.OriginalFile{Name: "invoice7.pdf", Size: 23}) {
			t.Fatalf("%s kept %+v", c.tool, o)
		}
		mustContain(t, c.tool+" request file", readVault(t, e, approval.DirPending, file), "the message from Vendor <vendor@example.org> of Tue, 10 Nov 2026",
			"Logs/originals/"+it.OriginalSHA256+".md")
	}
}
