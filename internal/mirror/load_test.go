package mirror_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/mirror"
)

// TestLoadMessage: the sinks' view of a message, read through agent-mail's
// API: sender, recipients by kind in addressed order, project slug, thread
// key, and the thread's earlier messages; a message that is not there is
// ErrNoMessage (the sinks skip it).
func TestLoadMessage(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r, err := e.svc.Send(ctx, agentmail.SendParams{ProjectKey: project, Sender: "BlueLake", To: []string{"RedStone", "GreenCastle"},
		CC: []string{"BlueLake"}, Subject: "plan", BodyMD: "the plan", Importance: "high", AckRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Deliveries[0].Payload.ID
	reply := e.reply(t, "GreenCastle", first)
	other := e.send(t, "RedStone", "elsewhere", "", "BlueLake")
	last := e.reply(t, "BlueLake", reply)

	m, err := mirror.LoadMessage(ctx, e.svc, first)
	if err != nil {
		t.Fatal(err)
	}
	want := mirror.Message{ID: first, ProjectID: m.ProjectID, ProjectSlug: slug, ThreadKey: strconv.FormatInt(first, 10),
		From: "BlueLake", To: []string{"RedStone", "GreenCastle"}, CC: []string{"BlueLake"}, Subject: "plan", BodyMD: "the plan",
		Importance: "high", AckRequired: true, CreatedAt: m.CreatedAt}
	if !reflect.DeepEqual(*m, want) || m.CreatedAt.IsZero() || m.ProjectID == 0 {
		t.Errorf("LoadMessage(%d) =\n%+v, want\n%+v", first, *m, want)
	}

	m, err = mirror.LoadMessage(ctx, e.svc, last)
	if err != nil {
		t.Fatal(err)
	}
	if m.ThreadKey != strconv.FormatInt(first, 10) || m.ReplyTo != reply {
		t.Errorf("reply: thread key %q, reply to %d; want %d, %d", m.ThreadKey, m.ReplyTo, first, reply)
	}
	prior, err := mirror.PriorInThread(ctx, e.svc, m)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range prior {
		got = append(got, p.ID)
	}
	if !slices.Equal(got, []int64{first, reply}) {
		t.Errorf("PriorInThread(%d) = %v, want [%d %d] (not %d, of another thread)", last, got, first, reply, other)
	}

	if _, err := mirror.LoadMessage(ctx, e.svc, last+100); !errors.Is(err, mirror.ErrNoMessage) {
		t.Errorf("LoadMessage of a missing message: %v, want ErrNoMessage", err)
	}
}
