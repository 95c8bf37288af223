package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/approval"
)

// composeLog is a ComposeFunc that records every request it is given.
type composeLog struct {
	finals []approval.Request
	send   *fakeSend
	err    error
}

func (c *composeLog) compose(final approval.Request) (Composed, error) {
	c.finals = append(c.finals, final)
	if c.err != nil {
		return Composed{}, c.err
	}
	return Composed{Send: c.send.send}, nil
}

// TestComposedOncePerRun: the gate builds the email once per run — before a
// new request file, with the Message-ID that file names; with the approval's
// final request, before the claim — and never for a request already waiting.
func TestComposedOncePerRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	g := e.gate(t, false)
	req := sendReq()
	c := &composeLog{send: &fakeSend{}}
	call := Call{Tool: "send_email", Request: req, Compose: c.compose}

	out := g.Run(context.Background(), call)
	if out.Status != AwaitingApproval || len(c.finals) != 1 {
		t.Fatalf("first call: %v (%v), composed %d times", out.Status, out.Err, len(c.finals))
	}
	id := c.finals[0].OutgoingMessageID
	if id == "" || !strings.Contains(e.file(t, approval.DirPending, out.PendingFile), "\noutgoing_message_id: \""+id+"\"\n") {
		t.Fatalf("composed with Message-ID %q; the request file says:\n%s", id, e.file(t, approval.DirPending, out.PendingFile))
	}
	if again := g.Run(context.Background(), call); again.Status != AwaitingApproval || len(c.finals) != 1 {
		t.Fatalf("the request already waiting was composed again: %v, %d times", again.Status, len(c.finals))
	}

	e.approve(t, g, req)
	out = g.Run(context.Background(), call)
	if out.Status != Sent || len(c.finals) != 2 || c.send.calls.Load() != 1 {
		t.Fatalf("approved call: %v (%v), composed %d times, %d sends", out.Status, out.Err, len(c.finals), c.send.calls.Load())
	}
	if got := c.finals[1].OutgoingMessageID; got != id {
		t.Fatalf("sent with Message-ID %q, the request named %q", got, id)
	}
}

// TestComposeRefusalWritesNoRequest: an email that cannot be built (too
// large, say) is refused as invalid before its request file is written, in
// DEV_MODE too.
func TestComposeRefusalWritesNoRequest(t *testing.T) {
	t.Parallel()
	for _, dev := range []bool{false, true} {
		e := newEnv(t, 10)
		g := e.gate(t, dev)
		tooLarge := errors.New("message too large: 30 MB once encoded, over Gmail's 25 MB limit")
		c := &composeLog{send: &fakeSend{}, err: tooLarge}
		out := g.Run(context.Background(), Call{Tool: "send_email", Request: sendReq(), Compose: c.compose})
		if out.Status != Invalid || !errors.Is(out.Err, tooLarge) || out.Message() != "Error: "+tooLarge.Error() {
			t.Fatalf("dev=%v: %v %v %q", dev, out.Status, out.Err, out.Message())
		}
		if n := e.names(t, approval.DirPending); len(n) != 0 || len(c.finals) != 1 || c.finals[0].OutgoingMessageID == "" {
			t.Fatalf("dev=%v: pending %v, composed %+v", dev, n, c.finals)
		}
	}
}
