package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Send later (issue 27 item 7): send_email, reply_email and forward_email
// take send_at. The request binds the time; once approved, the agent's
// identical call consumes the approval and the gate keeps the email built
// whole in the store (gate.Later, internal/schedule), sent once at its time
// by whichever server runs.

// maxSendAhead bounds how far ahead an email may be scheduled: a request
// expires (APPROVAL_TTL) long before, but the email itself may wait this
// long once approved.
const maxSendAhead = 366 * 24 * time.Hour

// sendAtArg parses send_at ("" for none) and checks it is ahead of now.
func sendAtArg(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, &mailmsg.InvalidError{Field: "send_at", Value: s,
			Text: "Invalid send_at: " + mailmsg.Quote(s) + " is not an RFC 3339 time with a zone, such as 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z"}
	}
	t = t.UTC().Truncate(time.Second)
	switch {
	case !t.After(now):
		return time.Time{}, &mailmsg.InvalidError{Field: "send_at", Value: s,
			Text: fmt.Sprintf("Invalid send_at: %s is not in the future (now %s); omit send_at to send once approved", approval.FormatSendAt(t), approval.FormatSendAt(now))}
	case t.Sub(now) > maxSendAhead:
		return time.Time{}, &mailmsg.InvalidError{Field: "send_at", Value: s,
			Text: fmt.Sprintf("Invalid send_at: %s is more than a year ahead", approval.FormatSendAt(t))}
	}
	return t, nil
}

// LaterSend is how the gate sends a kept email at its time
// (gate.Later.Send): from the email's own account, through gm.
func LaterSend(gm GmailGetter) func(ctx context.Context, acct string, raw []byte, threadID string) (gate.SendResult, error) {
	return func(ctx context.Context, acct string, raw []byte, threadID string) (gate.SendResult, error) {
		mb, err := gm(ctx, account.Resolve(acct))
		if err != nil {
			return gate.SendResult{}, err
		}
		s, err := mb.Send(ctx, raw, threadID)
		if err != nil {
			return gate.SendResult{}, err
		}
		return gate.SendResult{MessageID: s.ID, ThreadID: s.ThreadID}, nil
	}
}

// now is the gate's clock (a test's fake one), else the wall clock.
func (h *emailHandlers) now() time.Time {
	if h.d.Gate != nil && h.d.Gate.Now != nil {
		return h.d.Gate.Now()
	}
	return time.Now()
}

// noSendAt takes send_at out of the schema of the tools that share the
// compose input but send nothing (draft_email, update_draft).
func noSendAt(s *jsonschema.Schema) {
	delete(s.Properties, "send_at")
}
