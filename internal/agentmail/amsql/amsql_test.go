package amsql_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestSharedStatements runs every statement of amsql.Tx through the store of
// the run's engine (SQLite, or PostgreSQL with MAILGATE_TEST_POSTGRES set),
// one Tx method at a time, and checks what each returns: a statement written
// once must mean the same on both engines (placeholders rebound, parameter
// types PostgreSQL infers, list parameters, case folding), including the
// methods the Service reaches only through rarer paths.
func TestSharedStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := amtest.Store(t, storetest.Open(t))
	t0 := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !equal(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}

	var p agentmail.Project
	var green, blue agentmail.Agent
	var m1, m2 agentmail.Message
	rs := []*agentmail.Reservation{}
	err := st.Write(ctx, func(tx agentmail.Tx) error {
		p = agentmail.Project{Slug: "p", HumanKey: "/p", CreatedAt: at(0)}
		return tx.InsertProject(ctx, &p)
	})
	must("InsertProject", err)
	err = st.Write(ctx, func(tx agentmail.Tx) error {
		return tx.InsertProject(ctx, &agentmail.Project{Slug: "p", HumanKey: "/p2", CreatedAt: at(0)})
	})
	if !errors.Is(err, agentmail.ErrConflict) {
		t.Errorf("InsertProject with a taken slug = %v, want ErrConflict", err)
	}
	err = st.Write(ctx, func(tx agentmail.Tx) error {
		for _, a := range []*agentmail.Agent{&green, &blue} {
			*a = agentmail.Agent{ProjectID: p.ID, Program: "codex", Model: "m", InceptionAt: at(1), LastActiveAt: at(1),
				AttachmentsPolicy: "auto", ContactPolicy: agentmail.PolicyAuto}
		}
		green.Name, blue.Name = "GreenDog", "BlueLake"
		must("InsertAgent", tx.InsertAgent(ctx, &green))
		must("InsertAgent", tx.InsertAgent(ctx, &blue))
		blue.TaskDescription, blue.LastActiveAt = "reviews", at(5)
		must("UpdateAgent", tx.UpdateAgent(ctx, blue))
		must("TouchAgent", tx.TouchAgent(ctx, green.ID, at(4)))

		m1 = agentmail.Message{ProjectID: p.ID, SenderID: green.ID, ThreadID: "T-1", Subject: "Deploy 100% done", BodyMD: "the_migration ran",
			Importance: agentmail.ImportanceHigh, AckRequired: true, CreatedAt: at(10),
			Recipients: []agentmail.Recipient{{AgentID: blue.ID, Kind: "to", DeliveredAt: at(10)}}}
		must("InsertMessage", tx.InsertMessage(ctx, &m1))
		m2 = agentmail.Message{ProjectID: p.ID, SenderID: blue.ID, Subject: "held", BodyMD: "wait", Importance: agentmail.ImportanceNormal,
			CreatedAt: at(20), ReplyTo: m1.ID,
			Recipients: []agentmail.Recipient{{AgentID: green.ID, Kind: "cc", HeldReason: "contact"}}}
		must("InsertMessage", tx.InsertMessage(ctx, &m2))

		l := agentmail.ContactLink{FromAgentID: green.ID, ToAgentID: blue.ID, Status: "approved", Reason: "r", CreatedAt: at(2), UpdatedAt: at(2)}
		must("UpsertLink", tx.UpsertLink(ctx, &l))
		l2 := l
		l2.Status, l2.UpdatedAt = "blocked", at(3)
		must("UpsertLink", tx.UpsertLink(ctx, &l2))
		check("UpsertLink of an existing link: id", l2.ID, l.ID)

		for _, pat := range []string{"src/a.go", "docs/**"} {
			rs = append(rs, &agentmail.Reservation{ProjectID: p.ID, AgentID: green.ID, PathPattern: pat, Exclusive: true, Reason: "edit",
				CreatedAt: at(30), ExpiresAt: at(3600)})
		}
		must("InsertReservations", tx.InsertReservations(ctx, rs))
		must("SetReservationExpiry", tx.SetReservationExpiry(ctx, rs[0].ID, at(7200)))
		must("ReleaseReservation", tx.ReleaseReservation(ctx, rs[1].ID, at(40)))

		att := tx.(agentmail.AttachmentTx)
		must("InsertAttachments", att.InsertAttachments(ctx, m1.ID, []agentmail.Attachment{
			{Seq: 1, Path: "a.txt", MediaType: "text/plain", Size: 3, SHA256: "x", Data: []byte("abc")},
			{Seq: 2, Path: "b.bin", MediaType: "application/octet-stream", Size: 2, SHA256: "y", Data: []byte{0, 1}},
		}))
		h := tx.(agentmail.HoldersTx)
		must("SetAgentHolder", h.SetAgentHolder(ctx, agentmail.AgentHolder{AgentID: blue.ID, Session: "s1", TokenHash: "h1", BoundAt: at(1)}))
		must("SetAgentHolder", h.SetAgentHolder(ctx, agentmail.AgentHolder{AgentID: blue.ID, Session: "s2", TokenHash: "h2", BoundAt: at(2)}))
		return nil
	})
	must("Write", err)

	err = st.Write(ctx, func(tx agentmail.Tx) error {
		held, err := tx.HeldCopies(ctx, green.ID, 0)
		must("HeldCopies", err)
		check("HeldCopies(anyone)", len(held), 1)
		held, err = tx.HeldCopies(ctx, green.ID, green.ID)
		must("HeldCopies", err)
		check("HeldCopies(from GreenDog)", len(held), 0)
		must("Deliver", tx.Deliver(ctx, m2.ID, green.ID, at(50)))
		must("SetRead", tx.SetRead(ctx, m1.ID, blue.ID, at(60)))
		must("SetRead again", tx.SetRead(ctx, m1.ID, blue.ID, at(70)))
		must("SetAck", tx.SetAck(ctx, m1.ID, blue.ID, at(80)))
		return nil
	})
	must("Write", err)

	err = st.Read(ctx, func(tx agentmail.Tx) error {
		for _, f := range []func() (agentmail.Project, error){
			func() (agentmail.Project, error) { return tx.ProjectByID(ctx, p.ID) },
			func() (agentmail.Project, error) { return tx.ProjectBySlug(ctx, "p") },
			func() (agentmail.Project, error) { return tx.ProjectByHumanKey(ctx, "/p") },
		} {
			got, err := f()
			must("Project", err)
			check("Project", got, p)
		}
		if _, err := tx.ProjectBySlug(ctx, "nope"); !errors.Is(err, agentmail.ErrNotFound) {
			t.Errorf("ProjectBySlug(missing) = %v, want ErrNotFound", err)
		}
		ps, err := tx.Projects(ctx)
		must("Projects", err)
		check("Projects", ps, []agentmail.Project{p})

		a, err := tx.AgentByName(ctx, p.ID, "bluelake")
		must("AgentByName", err)
		check("AgentByName(other case)", a.ID, blue.ID)
		check("UpdateAgent: task", a.TaskDescription, "reviews")
		check("UpdateAgent: last active", a.LastActiveAt, at(5))
		a, err = tx.AgentByID(ctx, green.ID)
		must("AgentByID", err)
		check("TouchAgent: last active", a.LastActiveAt, at(4))
		as, err := tx.Agents(ctx, p.ID)
		must("Agents", err)
		check("Agents", len(as), 2)

		m, err := tx.MessageByID(ctx, m1.ID)
		must("MessageByID", err)
		check("MessageByID", []any{m.Subject, m.BodyMD, m.SenderName, m.ThreadID, m.AckRequired, m.Importance, m.CreatedAt},
			[]any{m1.Subject, m1.BodyMD, "GreenDog", "T-1", true, agentmail.ImportanceHigh, at(10)})
		m, err = tx.MessageByID(ctx, m2.ID)
		must("MessageByID", err)
		check("MessageByID: reply to", m.ReplyTo, m1.ID)
		rcpts, err := tx.Recipients(ctx, []int64{m1.ID, m2.ID})
		must("Recipients", err)
		check("Recipients", []int{len(rcpts[m1.ID]), len(rcpts[m2.ID])}, []int{1, 1})
		c, err := tx.Copy(ctx, m1.ID, blue.ID)
		must("Copy", err)
		check("Copy: read, ack", []time.Time{c.ReadAt, c.AckAt}, []time.Time{at(60), at(80)})
		c, err = tx.Copy(ctx, m2.ID, green.ID)
		must("Copy", err)
		check("Deliver", []any{c.DeliveredAt, c.HeldReason, c.Kind}, []any{at(50), "", "cc"})

		for _, tc := range []struct {
			q    agentmail.InboxQuery
			want int
		}{
			{agentmail.InboxQuery{AgentID: blue.ID, ProjectID: p.ID, Limit: 10, WithBodies: true}, 1},
			{agentmail.InboxQuery{AgentID: blue.ID, ProjectID: p.ID, Limit: 10, ThreadID: "T-1", UrgentOnly: true}, 1},
			{agentmail.InboxQuery{AgentID: blue.ID, ProjectID: p.ID, Limit: 10, UnreadOnly: true}, 0},
			{agentmail.InboxQuery{AgentID: blue.ID, ProjectID: p.ID, Limit: 10, AckRequired: true}, 0},
			{agentmail.InboxQuery{AgentID: blue.ID, ProjectID: p.ID, Limit: 10, Since: at(10)}, 0},
			{agentmail.InboxQuery{AgentID: green.ID, ProjectID: p.ID, Limit: 10, ThreadID: "T-1"}, 0},
			{agentmail.InboxQuery{AgentID: green.ID, ProjectID: p.ID, Limit: 10, UnreadOnly: true, Since: at(9)}, 1},
		} {
			items, err := tx.Inbox(ctx, tc.q)
			must("Inbox", err)
			check("len(Inbox(…))", len(items), tc.want)
			if len(items) > 0 && tc.q.AgentID == blue.ID {
				check("Inbox: body with bodies", items[0].BodyMD != "", tc.q.WithBodies)
				check("Inbox: kind, read", []any{items[0].Kind, items[0].ReadAt}, []any{"to", at(60)})
			}
		}
		th, err := tx.Thread(ctx, p.ID, "T-1", 10, false)
		must("Thread", err)
		check("Thread", len(th), 1)
		check("Thread: no body", th[0].BodyMD, "")
		after, err := tx.MessagesAfter(ctx, p.ID, m1.ID, 10)
		must("MessagesAfter", err)
		check("MessagesAfter", len(after), 1)

		for _, tc := range []struct {
			terms  []string
			viewer int64
			want   int
		}{
			{[]string{"100%"}, 0, 1},
			{[]string{"THE_MIGRATION"}, blue.ID, 1},
			{[]string{"the%migration"}, 0, 0},
			{[]string{"held"}, 0, 1},
		} {
			ms, err := tx.(interface {
				SearchLike(context.Context, agentmail.SearchQuery) ([]agentmail.Message, error)
			}).SearchLike(ctx, agentmail.SearchQuery{ProjectID: p.ID, Terms: tc.terms, ViewerID: tc.viewer, Limit: 10})
			must("SearchLike", err)
			check("len(SearchLike("+tc.terms[0]+"))", len(ms), tc.want)
		}
		last, err := tx.LastMailActivity(ctx, blue.ID)
		must("LastMailActivity", err)
		check("LastMailActivity", last, at(20))
		in, err := tx.InThread(ctx, blue.ID, p.ID, "T-1")
		must("InThread", err)
		check("InThread", in, true)
		in, err = tx.InThread(ctx, blue.ID, p.ID, "T-2")
		must("InThread", err)
		check("InThread(other)", in, false)
		counts, err := tx.UnreadCounts(ctx, p.ID)
		must("UnreadCounts", err)
		check("UnreadCounts", counts, map[int64]int{green.ID: 1})

		l, err := tx.Link(ctx, green.ID, blue.ID)
		must("Link", err)
		check("Link", []any{l.Status, l.UpdatedAt}, []any{"blocked", at(3)})
		if _, err := tx.Link(ctx, blue.ID, green.ID); !errors.Is(err, agentmail.ErrNotFound) {
			t.Errorf("Link(missing) = %v, want ErrNotFound", err)
		}
		ab, ba, err := tx.LinkPair(ctx, blue.ID, green.ID)
		must("LinkPair", err)
		check("LinkPair", []int64{ab.ID, ba.ID, ba.ToAgentID}, []int64{0, l.ID, blue.ID})
		from, err := tx.LinksFrom(ctx, green.ID)
		must("LinksFrom", err)
		to, err := tx.LinksTo(ctx, blue.ID)
		must("LinksTo", err)
		check("LinksFrom, LinksTo", []int{len(from), len(to)}, []int{1, 1})
		check("LinksFrom: names", []string{from[0].FromName, from[0].ToName, from[0].ToProject}, []string{"GreenDog", "BlueLake", "/p"})

		for _, tc := range []struct {
			q    agentmail.ReservationQuery
			want []int64
		}{
			{agentmail.ReservationQuery{ProjectID: p.ID}, []int64{rs[0].ID, rs[1].ID}},
			{agentmail.ReservationQuery{ProjectID: p.ID, ActiveAt: at(100)}, []int64{rs[0].ID}},
			{agentmail.ReservationQuery{ProjectID: p.ID, AgentID: blue.ID}, nil},
			{agentmail.ReservationQuery{ProjectID: p.ID, IDs: []int64{rs[1].ID}}, []int64{rs[1].ID}},
			{agentmail.ReservationQuery{ProjectID: p.ID, Patterns: []string{"docs/**", "x"}}, []int64{rs[1].ID}},
		} {
			got, err := tx.Reservations(ctx, tc.q)
			must("Reservations", err)
			var ids []int64
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			check("Reservations", ids, tc.want)
		}
		r, err := tx.ReservationByID(ctx, rs[0].ID)
		must("ReservationByID", err)
		check("ReservationByID", []any{r.PathPattern, r.Exclusive, r.AgentName, r.ExpiresAt, r.ReleasedAt.IsZero()},
			[]any{"src/a.go", true, "GreenDog", at(7200), true})

		att := tx.(agentmail.AttachmentTx)
		for _, withData := range []bool{false, true} {
			got, err := att.AttachmentsOf(ctx, []int64{m1.ID, m2.ID}, withData)
			must("AttachmentsOf", err)
			check("AttachmentsOf", len(got[m1.ID]), 2)
			if len(got[m1.ID]) == 2 {
				a := got[m1.ID][1]
				check("AttachmentsOf: seq 2", []any{a.Seq, a.Path, a.Size, a.MessageID}, []any{2, "b.bin", int64(2), m1.ID})
				check("AttachmentsOf: data", string(a.Data), map[bool]string{true: "\x00\x01"}[withData])
			}
		}
		hd, err := tx.(agentmail.HoldersTx).AgentHolder(ctx, blue.ID)
		must("AgentHolder", err)
		check("AgentHolder", []any{hd.Session, hd.TokenHash, hd.BoundAt}, []any{"s2", "h2", at(2)})
		if _, err := tx.(agentmail.HoldersTx).AgentHolder(ctx, green.ID); !errors.Is(err, agentmail.ErrNotFound) {
			t.Errorf("AgentHolder(nobody) = %v, want ErrNotFound", err)
		}
		return nil
	})
	must("Read", err)
}

// equal compares the values this test checks (times by instant).
func equal(got, want any) bool {
	switch g := got.(type) {
	case []any:
		w := want.([]any)
		return slices.EqualFunc(g, w, equal)
	case time.Time:
		return g.Equal(want.(time.Time))
	case []time.Time:
		return slices.EqualFunc(g, want.([]time.Time), time.Time.Equal)
	case []int64:
		return slices.Equal(g, want.([]int64))
	case []int:
		return slices.Equal(g, want.([]int))
	case []string:
		return slices.Equal(g, want.([]string))
	case map[int64]int:
		w := want.(map[int64]int)
		if len(g) != len(w) {
			return false
		}
		for k, v := range g {
			if w[k] != v {
				return false
			}
		}
		return true
	case []agentmail.Project:
		return slices.EqualFunc(g, want.([]agentmail.Project), func(a, b agentmail.Project) bool {
			return a.ID == b.ID && a.Slug == b.Slug && a.HumanKey == b.HumanKey && a.CreatedAt.Equal(b.CreatedAt)
		})
	case agentmail.Project:
		return equal([]agentmail.Project{g}, []agentmail.Project{want.(agentmail.Project)})
	}
	return got == want
}
