package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
)

// trash_email: a message or a whole thread moved to Gmail's Trash through
// the gate (nothing is deleted for good: Gmail empties Trash after 30
// days, and untrash_email takes it back before). The approval binds the id
// and mailgate's description of what it names (From, Subject, Date and
// snippet of each message; a thread's message count), so a thread that
// grew after the request needs a new approval. It takes no slot of the
// send limit and has no limit of its own: every trash is one human
// approval, which bounds it better than any count could, and the vault's
// backlog bounds bound the requests.

type emailTrashIn struct {
	accountArg
	MessageID string `json:"message_id,omitempty" jsonschema:"Gmail message ID to move to Trash; give this or thread_id"`
	ThreadID  string `json:"thread_id,omitempty" jsonschema:"Gmail thread ID to move to Trash whole; give this or message_id"`
}

// maxTrashListed bounds the messages a thread's request lists one by one.
const maxTrashListed = 100

func (h *emailHandlers) trash(ctx context.Context, _ *mcp.CallToolRequest, in emailTrashIn) (*mcp.CallToolResult, any, error) {
	mid, tid := strings.TrimSpace(in.MessageID), strings.TrimSpace(in.ThreadID)
	target := "message:" + oneLine(mid)
	if tid != "" {
		target = "thread:" + oneLine(tid)
	}
	return h.call(ctx, "trash_email", target, func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return h.doTrash(ctx, mid, tid)
	})
}

func (h *emailCall) doTrash(ctx context.Context, mid, tid string) (*mcp.CallToolResult, gate.Outcome) {
	tr := h.gm
	if (mid == "") == (tid == "") {
		return invalid(&approval.ValidationError{Field: "message_id", Text: "give message_id or thread_id, not both"})
	}
	req := approval.Request{Account: h.reqAccount, Kind: approval.KindTrash, MessageID: mid, ThreadID: tid, Subject: "x"}
	if err := req.Validate(); err != nil {
		return invalid(err)
	}
	// Reading what is trashed is a read: before the gate, so a wrong id
	// never writes a request.
	var msgs []*gmail.Message
	var err error
	if tid != "" {
		msgs, err = h.gm.Thread(ctx, tid)
	} else {
		var m *gmail.Message
		if m, err = h.gm.Message(ctx, mid); err == nil {
			msgs = []*gmail.Message{m}
		}
	}
	switch {
	case err != nil && tid != "":
		return failed(readFailure(err, "Thread", tid, "moving to Trash"))
	case err != nil:
		return failed(readFailure(err, "Message", mid, "moving to Trash"))
	case len(msgs) == 0:
		return failed(fmt.Sprintf("Error: Thread ID %s has no messages.", tid))
	}
	if trashed(msgs) {
		return h.alreadyTrashed(req), gate.Outcome{Status: gate.Failed}
	}
	req.Subject, req.Body = headerLine(msgs[0].Subject), describeTrash(req, msgs)
	return h.submit(ctx, gate.Call{Tool: "trash_email", Request: req,
		Compose: gate.Exactly(req, func(ctx context.Context) (gate.SendResult, error) {
			if tid != "" {
				_, err := tr.TrashThread(ctx, tid)
				return gate.SendResult{ThreadID: tid}, err
			}
			ml, err := tr.TrashMessage(ctx, mid)
			return gate.SendResult{MessageID: ml.ID, ThreadID: ml.ThreadID}, err
		})})
}

// trashed reports whether every message is in Trash already.
func trashed(msgs []*gmail.Message) bool {
	for _, m := range msgs {
		if !slices.Contains(m.Labels, "TRASH") {
			return false
		}
	}
	return true
}

// alreadyTrashed answers a call for what is in Trash already: when
// mailgate put it there, its Done/ record is named.
func (h *emailHandlers) alreadyTrashed(req approval.Request) *mcp.CallToolResult {
	what := "Message " + req.MessageID
	if req.ThreadID != "" {
		what = "Thread " + req.ThreadID
	}
	done, _ := h.d.Gate.Vault.ActionFiles(approval.DirDone, req)
	for i := len(done) - 1; i >= 0; i-- {
		if done[i].Status == approval.StatusSent {
			return errorResult(fmt.Sprintf("Error: %s is already in Trash: it was moved there at %s (vault/%s/%s). Nothing was done.",
				what, done[i].SentAt.UTC().Format("2006-01-02T15:04:05Z"), approval.DirDone, done[i].Name))
		}
	}
	return errorResult(fmt.Sprintf("Error: %s is already in Trash. Nothing was done.", what))
}

// describeTrash is the request's description of what is trashed: what
// content_sha256 binds beside the id. Labels are left out (reading mail
// changes UNREAD, which must not void an approval).
func describeTrash(req approval.Request, msgs []*gmail.Message) string {
	var b strings.Builder
	one := func(m *gmail.Message) {
		fmt.Fprintf(&b, "From: %s\nTo: %s\nSubject: %s\nDate: %s\nSnippet: %s\n",
			headerLine(m.From), headerLine(m.To), headerLine(m.Subject), headerLine(m.Date), headerLine(m.Snippet))
		if len(m.Attachments) > 0 {
			fmt.Fprintf(&b, "Attachments: %s\n", headerLine(strings.Join(m.Attachments, ", ")))
		}
	}
	if req.ThreadID == "" {
		fmt.Fprintf(&b, "Move to Trash: message %s (in thread %s)\n\n", req.MessageID, msgs[0].ThreadID)
		one(msgs[0])
		return b.String()
	}
	noun := "messages"
	if len(msgs) == 1 {
		noun = "message"
	}
	fmt.Fprintf(&b, "Move to Trash: the whole thread %s, %d %s\n", req.ThreadID, len(msgs), noun)
	for i, m := range msgs {
		if i == maxTrashListed {
			fmt.Fprintf(&b, "\n… and %d more messages (ids in Gmail; the count above is bound by the approval)\n", len(msgs)-i)
			break
		}
		fmt.Fprintf(&b, "\n%d. message %s\n", i+1, m.ID)
		one(m)
	}
	return b.String()
}
