package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// TestAgentMailNames: a free valid name is kept; any other outcome is said
// in the answer; each mode behaves as documented.
func TestAgentMailNames(t *testing.T) {
	t.Parallel()
	reg := func(h *amHarness, tool string, args map[string]any) agentmail.AgentProfile {
		var p agentmail.AgentProfile
		h.call(tool, args, &p)
		return p
	}
	t.Run("coerce", func(t *testing.T) {
		h := newAMHarness(t)
		h.setup("/p/app")
		if p := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "ManagerMoose"}); p.Name != "ManagerMoose" || p.NameNotice != "" {
			t.Errorf("free valid name not kept: %+v", p)
		}
		p := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "claude-code", "program": "claude-code"})
		if p.Name == "claude-code" || p.RequestedName != "claude-code" || !strings.Contains(p.NameNotice, p.Name) {
			t.Errorf("replaced name not announced: %+v", p)
		}
		if agentmail.NameProblem(p.Name) != "" {
			t.Errorf("generated name %q is invalid", p.Name)
		}
		again := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "managermoose", "task_description": "x"})
		if again.Name != "ManagerMoose" || again.ID != 1 || again.NameNotice == "" || again.TaskDescription != "x" {
			t.Errorf("case-insensitive re-registration: %+v", again)
		}
		fresh := reg(h, "create_agent_identity", map[string]any{"project_key": "/p/app", "name_hint": "ManagerMoose"})
		if fresh.Name == "ManagerMoose" || fresh.ID == 1 || !strings.Contains(fresh.NameNotice, "taken") {
			t.Errorf("create_agent_identity on a taken name: %+v", fresh)
		}
		auto := reg(h, "register_agent", map[string]any{"project_key": "/p/app"})
		if auto.Name == "" || auto.NameNotice != "" {
			t.Errorf("generated name: %+v", auto)
		}
	})
	t.Run("strict", func(t *testing.T) {
		h := newAMHarness(t, func(o *agentmail.Options) { o.NameMode = agentmail.NameStrict })
		h.setup("/p/app")
		if got := h.callErr("register_agent", map[string]any{"project_key": "/p/app", "name": "gpt-5"}); !strings.Contains(got, "model name") {
			t.Errorf("strict refusal: %q", got)
		}
		// The overview's rule: adjective+noun only (issue 22).
		for _, name := range []string{"coder-1", "ManagerMoose", "Agent7", "GreenGreen", "CastleGreen"} {
			if got := h.callErr("register_agent", map[string]any{"project_key": "/p/app", "name": name}); !strings.Contains(got, "an adjective and a noun") {
				t.Errorf("strict accepted %s: %q", name, got)
			}
		}
		if p := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "SwiftFox"}); p.Name != "SwiftFox" || p.NameNotice != "" {
			t.Errorf("strict adjective+noun name: %+v", p)
		}
		if p := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "quietowl"}); p.Name != "QuietOwl" || !strings.Contains(p.NameNotice, "CamelCase") {
			t.Errorf("strict lower-case name: %+v", p)
		}
		if p := reg(h, "register_agent", map[string]any{"project_key": "/p/app"}); agentmail.NameProblem(p.Name) != "" {
			t.Errorf("strict generated %q", p.Name)
		} else if _, ok := agentmail.AdjectiveNounName(p.Name); !ok {
			t.Errorf("strict generated %q, not adjective+noun", p.Name)
		}
	})
	t.Run("strict resumes an existing name", func(t *testing.T) {
		// An identity made before (in coerce mode, or by the mailbox set)
		// resumes under strict: the rule is for new names.
		path := t.TempDir() + "/am.db"
		before := liveKeySet()
		h := newAMHarnessAt(t, path)
		h.setup("/p/app", "ManagerMoose")
		// The first agent's process stops: its session ends, so its name is
		// free to resume (a live holder's would be refused).
		first := newKeys(before)
		h.cs.Close()
		waitKeysGone(t, first)
		h.svc.Close()
		h.db.Close()
		s := newAMHarnessAt(t, path, func(o *agentmail.Options) { o.NameMode = agentmail.NameStrict })
		if p := reg(s, "register_agent", map[string]any{"project_key": "/p/app", "name": "ManagerMoose"}); p.Name != "ManagerMoose" || p.ID != 1 {
			t.Errorf("strict did not resume ManagerMoose: %+v", p)
		}
	})
	t.Run("always_auto", func(t *testing.T) {
		h := newAMHarness(t, func(o *agentmail.Options) { o.NameMode = agentmail.NameAlwaysAuto })
		h.setup("/p/app")
		if p := reg(h, "register_agent", map[string]any{"project_key": "/p/app", "name": "GreenCastle"}); p.RequestedName != "GreenCastle" || p.NameNotice == "" {
			t.Errorf("always_auto without notice: %+v", p)
		}
	})
}

// TestAgentMailHeldMail: mail a policy does not accept is held (listed to
// the sender, announced to the recipient), and delivered once approved or
// once the policy allows it. Nothing is dropped.
func TestAgentMailHeldMail(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/app", "GreenDog", "BlueLake", "RedFox")
	h.call("set_contact_policy", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "policy": "contacts_only"}, nil)
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake", "RedFox"}, "subject": "plan", "body_md": "b"}, &sent)
	if len(sent.Held) != 1 || sent.Held[0].Agent != "BlueLake" || sent.Held[0].Policy != "contacts_only" {
		t.Fatalf("held not reported: %+v", sent)
	}
	id := sent.Deliveries[0].Payload.ID
	blue := h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "BlueLake"})
	if len(blue) != 1 || !strings.HasPrefix(blue[0].Subject, "Contact request from GreenDog") {
		t.Fatalf("BlueLake should see only the contact request: %+v", blue)
	}
	if len(h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "RedFox"})) != 1 {
		t.Fatal("RedFox (auto) did not get the message")
	}
	var contacts []agentmail.ContactEntry
	h.call("list_contacts", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake"}, &contacts)
	if len(contacts) != 1 || contacts[0].From != "GreenDog" || contacts[0].Direction != "incoming" || contacts[0].HeldMessages != 1 {
		t.Fatalf("incoming request: %+v", contacts)
	}
	// A second held message does not send a second request.
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "again", "body_md": "b"}, nil)
	if n := len(h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "BlueLake"})); n != 1 {
		t.Fatalf("BlueLake inbox has %d messages, want only the single request", n)
	}
	var resp agentmail.ContactResponseResult
	h.call("respond_contact", map[string]any{"project_key": "/p/app", "to_agent": "BlueLake", "from_agent": "GreenDog", "accept": true}, &resp)
	if !resp.Approved || resp.Released != 2 {
		t.Fatalf("approval released %d: %+v", resp.Released, resp)
	}
	blue = h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "BlueLake"})
	if len(blue) != 3 || blue[2].ID != id || blue[0].Subject != "again" {
		t.Fatalf("held mail not delivered in order: %+v", blue)
	}

	// block_all holds even contact requests; loosening the policy delivers.
	h.call("set_contact_policy", map[string]any{"project_key": "/p/app", "agent_name": "RedFox", "policy": "block_all"}, nil)
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "BlueLake", "to": []string{"RedFox"}, "subject": "blocked", "body_md": "b"}, &sent)
	if len(sent.Held) != 1 || len(h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "RedFox"})) != 1 {
		t.Fatalf("block_all did not hold: %+v", sent)
	}
	var pol agentmail.PolicyResult
	h.call("set_contact_policy", map[string]any{"project_key": "/p/app", "agent_name": "RedFox", "policy": "open"}, &pol)
	if pol.Released != 2 { // the message and BlueLake's automatic contact request
		t.Fatalf("opening the policy released %d", pol.Released)
	}
	// Declining keeps mail held, never deletes it.
	h.call("set_contact_policy", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "policy": "contacts_only"}, nil)
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "RedFox", "to": []string{"GreenDog"}, "subject": "hi", "body_md": "b"}, &sent)
	h.call("respond_contact", map[string]any{"project_key": "/p/app", "to_agent": "GreenDog", "from_agent": "RedFox", "accept": false}, nil)
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "RedFox", "to": []string{"GreenDog"}, "subject": "hi again", "body_md": "b"}, &sent)
	if len(sent.Held) != 1 || !strings.Contains(sent.Held[0].Reason, "declined") {
		t.Fatalf("declined sender not held: %+v", sent)
	}
}

// TestAgentMailCrossProject: Name@project addresses another project; auto
// holds it until the contact is approved, then it flows both ways.
func TestAgentMailCrossProject(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/backend", "GreenCastle")
	h.setup("/p/frontend", "BlueLake")
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": "/p/backend", "sender_name": "GreenCastle", "to": []string{"BlueLake@p-frontend"}, "subject": "api", "body_md": "b"}, &sent)
	if len(sent.Held) != 1 || sent.Deliveries[0].Project != "/p/frontend" || sent.Deliveries[0].Payload.To[0] != "BlueLake@p-frontend" {
		t.Fatalf("cross-project send: %+v", sent)
	}
	var req agentmail.ContactRequestResult
	h.call("request_contact", map[string]any{"project_key": "/p/backend", "from_agent": "GreenCastle", "to_agent": "BlueLake", "to_project": "/p/frontend", "reason": "API"}, &req)
	if req.Status != "pending" || req.ToProject != "/p/frontend" {
		t.Fatalf("request: %+v", req)
	}
	var resp agentmail.ContactResponseResult
	h.call("respond_contact", map[string]any{"project_key": "/p/frontend", "to_agent": "BlueLake", "from_agent": "GreenCastle", "from_project": "p-backend", "accept": true}, &resp)
	if resp.Released != 1 { // the held message; the introductions went through (auto accepts contact requests)
		t.Fatalf("released %d", resp.Released)
	}
	var back agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": "/p/frontend", "sender_name": "BlueLake", "to": []string{"GreenCastle@/p/backend"}, "subject": "ok", "body_md": "b"}, &back)
	if len(back.Held) != 0 {
		t.Fatalf("approved contact held: %+v", back)
	}
	var contacts []agentmail.ContactEntry
	h.call("list_contacts", map[string]any{"project_key": "/p/frontend", "agent_name": "BlueLake"}, &contacts)
	if len(contacts) != 1 || contacts[0].To != "GreenCastle@p-backend" || contacts[0].Status != "approved" {
		t.Fatalf("contacts: %+v", contacts)
	}
}

// TestAgentMailReservations: shared vs exclusive, renew, release by id,
// TTL floor, and force-release only when stale (holder notified).
func TestAgentMailReservations(t *testing.T) {
	t.Parallel()
	h, clock := newAMHarnessClocked(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	var a, b agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"docs/**"}, "exclusive": false, "ttl_seconds": 5}, &a)
	if len(a.Warnings) == 0 {
		t.Error("ttl below 60 s accepted silently")
	}
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"docs/*.md"}, "exclusive": false, "ttl_seconds": 3600}, &b)
	if len(b.Conflicts) != 0 {
		t.Fatalf("shared vs shared conflicted: %+v", b)
	}
	var c agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"/p/app/docs/index.md"}, "exclusive": true}, &c)
	if c.Granted[0].PathPattern != "docs/index.md" || len(c.Conflicts) != 1 {
		t.Fatalf("exclusive vs shared: %+v", c)
	}
	// Same agent, same pattern: extended, not duplicated.
	var again agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"docs/index.md"}, "exclusive": true}, &again)
	if again.Granted[0].ID != c.Granted[0].ID {
		t.Fatalf("re-reservation duplicated: %+v vs %+v", again, c)
	}
	var ren agentmail.RenewResult
	h.call("renew_file_reservations", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "file_reservation_ids": []any{c.Granted[0].ID}, "extend_seconds": 600}, &ren)
	if ren.Renewed != 1 || *ren.FileReservations[0].NewExpiresTS <= *ren.FileReservations[0].OldExpiresTS {
		t.Fatalf("renew: %+v", ren)
	}
	// Force release: refused while GreenDog is active, allowed once stale.
	if got := h.callErr("force_release_file_reservation", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "file_reservation_id": a.Granted[0].ID}); !strings.Contains(got, "still active") {
		t.Fatalf("active reservation force-released: %q", got)
	}
	h.call("renew_file_reservations", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "new_ttl_seconds": 7200}, nil)
	clock.Advance(45 * time.Minute)
	var forced agentmail.ForceResult
	h.call("force_release_file_reservation", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "file_reservation_id": a.Granted[0].ID, "note": "taking docs"}, &forced)
	if forced.Released != 1 || !forced.Notified || !forced.Reservation.Stale {
		t.Fatalf("force release: %+v", forced)
	}
	green := h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "include_bodies": true})
	if len(green) != 1 || !strings.Contains(*green[0].BodyMD, "taking docs") {
		t.Fatalf("holder not notified: %+v", green)
	}
	var rel agentmail.ReleaseResult
	h.call("release_file_reservations", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"docs/*.md"}}, &rel)
	if rel.Released != 1 {
		t.Fatalf("release by path: %+v", rel)
	}
}

// TestAgentMailSearch: FTS5 syntax works and odd input never errors.
func TestAgentMailSearch(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	for _, m := range []struct{ subject, body string }{
		{"Build failed on main", "the migration script broke POL-358"},
		{"Deploy plan", "migrate the database, then deploy"},
		{"Lunch", "pizza or sushi"},
	} {
		h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": m.subject, "body_md": m.body}, nil)
	}
	search := func(q string) agentmail.SearchResult {
		var r agentmail.SearchResult
		h.call("search_messages", map[string]any{"project_key": "/p/app", "query": q}, &r)
		return r
	}
	cases := []struct {
		q    string
		want []string
	}{
		{`"build failed"`, []string{"Build failed on main"}},
		{`migra*`, []string{"Build failed on main", "Deploy plan"}},
		{`deploy AND database`, []string{"Deploy plan"}},
		{`pizza OR broke`, []string{"Build failed on main", "Lunch"}},
		{`migra* NOT deploy`, []string{"Build failed on main"}},
		{`POL-358`, []string{"Build failed on main"}},
		{`subject:lunch`, []string{"Lunch"}},
		{`(pizza OR sushi) AND lunch`, []string{"Lunch"}},
	}
	for _, c := range cases {
		r := search(c.q)
		var got []string
		for _, hit := range r.Result {
			got = append(got, hit.Subject)
		}
		if strings.Join(sorted(got), "|") != strings.Join(sorted(c.want), "|") {
			t.Errorf("%s: got %v, want %v", c.q, got, c.want)
		}
	}
	for _, q := range []string{"*", `"unterminated`, "AND", "OR OR", "NOT", "((", ")", "a AND", "-", `"`, "NEAR(", "col:x", "\x00", "***foo", "{}[]"} {
		r := search(q) // must not fail
		if q != "" && r.Diagnostics == nil && len(r.Result) == 0 && q != "col:x" {
			t.Logf("%q: no diagnostics", q)
		}
	}
	if r := search(`"build failed`); len(r.Result) != 1 || r.Diagnostics == nil {
		t.Errorf("repaired query: %+v", r)
	}
}

func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestAgentMailSummaryAndMacros covers summarize_thread and the macros.
func TestAgentMailSummaryAndMacros(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	var start agentmail.StartSessionResult
	h.call("macro_start_session", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "program": "codex-cli", "model": "gpt-5",
		"reserve_paths": []string{"src/**"}}, &start)
	if start.Project.Slug != "p-app" || start.Agent.Name != "GreenDog" || len(start.FileReservations.Granted) != 1 {
		t.Fatalf("start session: %+v", start)
	}
	h.setup("/p/app", "BlueLake")
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "Plan", "thread_id": "T-9",
		"body_md": "# Goals\n- ship v2\n- [ ] TODO: write docs\n- [x] review API\nFIXME: flaky test in `pkg/x_test.go`\n@BlueLake please check\n```\n- not a point\n```"}, &sent)
	var sum agentmail.ThreadSummaryResult
	h.call("summarize_thread", map[string]any{"project_key": "/p/app", "thread_id": "T-9", "include_examples": true, "llm_mode": true}, &sum)
	s := sum.Summary
	if strings.Join(s.KeyPoints, "|") != "Goals|ship v2" || len(s.ActionItems) != 3 || s.OpenActions != 2 || s.DoneActions != 1 ||
		len(s.Mentions) != 1 || s.Mentions[0].Name != "BlueLake" || len(s.CodeReferences) != 1 || len(sum.Examples) != 1 {
		t.Fatalf("summary: %+v", sum)
	}
	var prep agentmail.PrepareThreadResult
	h.call("macro_prepare_thread", map[string]any{"project_key": "/p/app", "thread_id": "T-9", "agent_name": "BlueLake"}, &prep)
	if prep.Thread.TotalMessages != 1 || len(prep.Inbox) != 1 || prep.Agent.Name != "BlueLake" {
		t.Fatalf("prepare thread: %+v", prep)
	}
	var cycle agentmail.CycleResult
	h.call("macro_file_reservation_cycle", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"src/a.go"}, "auto_release": true}, &cycle)
	if len(cycle.FileReservations.Conflicts) != 1 || cycle.Released == nil || cycle.Released.Released != 1 {
		t.Fatalf("cycle: %+v", cycle)
	}
	var hs agentmail.HandshakeResult
	h.call("macro_contact_handshake", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "to_agent": "GreenDog", "auto_accept": true,
		"welcome_subject": "Hi", "welcome_body": "Glad to work with you"}, &hs)
	if hs.Response == nil || !hs.Response.Approved || hs.WelcomeMessage == nil || hs.WelcomeMessage.Count != 1 {
		t.Fatalf("handshake: %+v", hs)
	}
}
