package mirror_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestEscalationMirrored: the ACK escalation's reminder and notice are
// ordinary messages, so the Gmail mirror copies them like any other, in
// the original message's thread.
func TestEscalationMirrored(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC).UnixMicro())
	svc := amtest.AgentMail(t, e.db, agentmail.Options{Now: func() time.Time { return time.UnixMicro(now.Load()) },
		Escalation: agentmail.EscalationOptions{Deadline: time.Minute}})
	ctx := context.Background()
	r, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: project, Sender: "BlueLake", To: []string{"GreenCastle"},
		Subject: "Schema change", BodyMD: "please ack", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	orig := r.Deliveries[0].Payload.ID
	now.Add((2 * time.Minute).Microseconds())
	if rep, err := svc.EscalateDue(ctx); err != nil || rep.Reminders != 1 || rep.Notices != 1 {
		t.Fatalf("escalation: %+v, %v", rep, err)
	}
	escalations := func(agent string) []int64 {
		es, err := svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: project, Agent: agent})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, m := range es {
			if m.ID != orig {
				ids = append(ids, m.ID)
			}
		}
		return ids
	}
	reminder, notice := escalations("GreenCastle"), escalations("BlueLake")
	if len(reminder) != 1 || len(notice) != 1 {
		t.Fatalf("reminders %v, notices %v", reminder, notice)
	}
	e.startGmail(t, e.db, e.svc, 0)
	waitDrained(t, e.db, "gmail", drainWait)
	assertExactlyOnce(t, e, []int64{orig, reminder[0], notice[0]})
	for id, subject := range map[int64]string{reminder[0]: "Subject: Reminder: please acknowledge: Schema change",
		notice[0]: "Subject: Not acknowledged by GreenCastle: Schema change"} {
		raw := strings.ReplaceAll(rawOf(t, e, id), "\r\n ", " ")
		for _, h := range []string{subject, "X-Agent-Mail-Thread: " + strconv.FormatInt(orig, 10)} {
			if !strings.Contains(raw, h+"\r\n") {
				t.Errorf("message %d lacks %q:\n%s", id, h, raw)
			}
		}
		if !strings.Contains(raw, "References: "+msgID(t, e, orig)) {
			t.Errorf("message %d does not refer to the message it escalates:\n%s", id, raw)
		}
	}
}
