package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestAgentMailToolList: the set the harness serves, on the run's engine,
// is exactly the set's reviewed snapshots (testdata/toolsnaps/agentmail,
// one file per tool, held to the inventory by TestToolSnapshots): the
// contract's 24 tools, the reference's commit guard pair
// (install/uninstall_precommit_guard; their titles, descriptions and risk:
// TestToolsDeclareTheirRisk) and its product tools (ensure_product,
// products_link, fetch_inbox_product, search_messages_product,
// summarize_thread_product). A tool added or removed is a snapshot file in
// the diff, not a line here.
func TestAgentMailToolList(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(filepath.Join("testdata", "toolsnaps", config.ToolsAgentMail))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && name != "resource_templates" {
			want = append(want, name)
		}
	}
	slices.Sort(want)
	if got := toolNames(t, newAMHarness(t)); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want the snapshots' %v", got, want)
	}
}

// inbox is the decoded fetch_inbox answer.
type inboxEntry struct {
	ID          int64   `json:"id"`
	Subject     string  `json:"subject"`
	From        string  `json:"from"`
	ThreadID    *string `json:"thread_id"`
	Importance  string  `json:"importance"`
	AckRequired bool    `json:"ack_required"`
	BodyMD      *string `json:"body_md"`
	Kind        string  `json:"kind"`
	ReadTS      *string `json:"read_ts"`
	AckTS       *string `json:"ack_ts"`
	Attachments []any   `json:"attachments"`
}

func (h *amHarness) inbox(args map[string]any) []inboxEntry {
	h.t.Helper()
	var out []inboxEntry
	h.call("fetch_inbox", args, &out)
	return out
}

func (h *amHarness) setup(project string, agents ...string) {
	h.t.Helper()
	h.call("ensure_project", map[string]any{"human_key": project}, nil)
	for _, a := range agents {
		var prof agentmail.AgentProfile
		h.call("register_agent", map[string]any{"project_key": project, "name": a, "program": "claude-code", "model": "opus-4.5"}, &prof)
		if prof.Name != a {
			h.t.Fatalf("registered %s as %s", a, prof.Name)
		}
	}
}

// TestAgentMailTypicalWorkflow is the contract's "Typical Workflow" with two
// agents: health, project, identities, reservations with a conflict,
// messages, replies, read and ack, release.
func TestAgentMailTypicalWorkflow(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	const proj = "/data/projects/brenner_bot"
	var health agentmail.HealthResult
	h.call("health_check", map[string]any{}, &health)
	if health.Status != "ready" {
		t.Fatalf("health: %+v", health)
	}
	var ep agentmail.EnsureProjectResult
	h.call("ensure_project", map[string]any{"human_key": proj}, &ep)
	if ep.Slug != "data-projects-brenner-bot" {
		t.Fatalf("slug %q", ep.Slug)
	}
	var again agentmail.EnsureProjectResult
	h.call("ensure_project", map[string]any{"human_key": proj + "/"}, &again)
	if again.ID != ep.ID || again.Slug != ep.Slug {
		t.Fatalf("ensure_project not stable: %+v vs %+v", again, ep)
	}
	h.setup(proj, "GreenDog", "BlueMountain")

	// Reserve: GreenDog takes src/**; BlueMountain's src/api/*.go overlaps.
	var r1, r2 agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": ep.Slug, "agent_name": "GreenDog", "paths": []string{"src/**"}, "reason": "KICKOFF"}, &r1)
	if len(r1.Granted) != 1 || len(r1.Conflicts) != 0 {
		t.Fatalf("first reservation: %+v", r1)
	}
	h.call("file_reservation_paths", map[string]any{"project_key": proj, "agent_name": "BlueMountain", "paths": []string{"src/api/*.go", "docs/**"}, "exclusive": true}, &r2)
	if len(r2.Granted) != 2 || len(r2.Conflicts) != 1 || r2.Conflicts[0].Path != "src/api/*.go" ||
		r2.Conflicts[0].Code != "FILE_RESERVATION_CONFLICT" || r2.Conflicts[0].Holders[0].Agent != "GreenDog" {
		t.Fatalf("conflict not reported: %+v", r2)
	}

	// Send with ack; the recipient fetches twice: fetching changes nothing.
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": proj, "sender_name": "GreenDog", "to": []string{"BlueMountain"},
		"subject": "KICKOFF: Cell fate", "body_md": "# Session\n- [ ] TODO: write the slate", "thread_id": "RS-1", "ack_required": true, "importance": "high"}, &sent)
	id := sent.Deliveries[0].Payload.ID
	for range 2 {
		got := h.inbox(map[string]any{"project_key": proj, "agent_name": "BlueMountain", "unread_only": true, "include_bodies": true})
		if len(got) != 1 || got[0].ID != id || got[0].ReadTS != nil || got[0].BodyMD == nil || !got[0].AckRequired {
			t.Fatalf("inbox: %+v", got)
		}
	}

	// Reply keeps the thread and prefixes Re: once, also on a reply to a reply.
	var rep agentmail.ReplyResult
	h.call("reply_message", map[string]any{"project_key": proj, "message_id": id, "sender_name": "BlueMountain", "body_md": "On it"}, &rep)
	if rep.Subject != "Re: KICKOFF: Cell fate" || *rep.ThreadID != "RS-1" || rep.To[0] != "GreenDog" || rep.Importance != "high" || !rep.AckRequired {
		t.Fatalf("reply: %+v", rep)
	}
	var rep2 agentmail.ReplyResult
	h.call("reply_message", map[string]any{"project_key": proj, "message_id": rep.ID, "sender_name": "GreenDog", "body_md": "Thanks"}, &rep2)
	if rep2.Subject != "Re: KICKOFF: Cell fate" || rep2.To[0] != "BlueMountain" {
		t.Fatalf("reply to reply: %+v", rep2)
	}
	if got := h.inbox(map[string]any{"project_key": proj, "agent_name": "GreenDog"}); len(got) != 1 || got[0].ID != rep.ID {
		t.Fatalf("sender's inbox: %+v", got)
	}

	// Ack marks read too; both stay put on repetition.
	var ack, ack2 agentmail.AckResult
	h.call("acknowledge_message", map[string]any{"project_key": proj, "agent_name": "BlueMountain", "message_id": id}, &ack)
	h.call("acknowledge_message", map[string]any{"project_key": proj, "agent_name": "BlueMountain", "message_id": id}, &ack2)
	if !ack.Acknowledged || ack.ReadAt == nil || *ack.AcknowledgedAt != *ack2.AcknowledgedAt {
		t.Fatalf("ack: %+v %+v", ack, ack2)
	}
	if got := h.inbox(map[string]any{"project_key": proj, "agent_name": "BlueMountain", "unread_only": true}); len(got) != 1 || got[0].ID != rep2.ID {
		t.Fatalf("unread after ack: %+v", got)
	}

	// Release, and the path is free for the other agent.
	var rel agentmail.ReleaseResult
	h.call("release_file_reservations", map[string]any{"project_key": proj, "agent_name": "GreenDog"}, &rel)
	if rel.Released != 1 {
		t.Fatalf("released %d", rel.Released)
	}
	var r3 agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": proj, "agent_name": "BlueMountain", "paths": []string{"src/**"}}, &r3)
	if len(r3.Conflicts) != 0 {
		t.Fatalf("conflict after release: %+v", r3)
	}
}

// TestAgentMailRefusals: every refusal is a tool error (isError) whose text
// names the problem as the contract does; none is a protocol error.
func TestAgentMailRefusals(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	h.checkRefusals([]refusal{
		{"ensure_project", map[string]any{"human_key": "./backend"}, "absolute"},
		{"ensure_project", map[string]any{"human_key": "backend"}, "Invalid project_key"},
		{"register_agent", map[string]any{"project_key": "/nope"}, "Project not found"},
		{"register_agent", map[string]any{"project_key": "./backend"}, "Invalid project_key: \"./backend\" is a relative path"},
		{"fetch_inbox", map[string]any{"project_key": "p/app", "agent_name": "GreenDog"}, "Invalid project_key"},
		{"register_agent", map[string]any{"project_key": "/p/app", "name": "RedFox", "attachments_policy": "always"}, "use auto, inline, attach (or its earlier name file) or deny"},
		{"whois", map[string]any{"project_key": "/p/app", "agent_name": "GreenDgo"}, "Agent 'GreenDgo' not found"},
		{"whois", map[string]any{"project_key": "/p/app", "agent_name": "GreenDgo"}, "Did you mean 'GreenDog'"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"Nobody"}, "subject": "s", "body_md": "b"}, "Agent 'Nobody' not found"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b", "importance": "critical"}, "importance"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b", "thread_id": "bad id!"}, "thread_id"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{}, "subject": "s", "body_md": "b"}, "no recipients"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": " ", "body_md": "b"}, "subject"},
		{"reply_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "message_id": 999, "body_md": "b"}, "Message 999 not found"},
		{"mark_message_read", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "message_id": "abc"}, "not a message id"},
		{"mark_message_read", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "message_id": 5}, "not found"},
		{"fetch_inbox", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "since_ts": "yesterday"}, "since_ts"},
		{"fetch_inbox", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "limit": -1}, "limit"},
		{"file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{}}, "paths list cannot be empty"},
		{"file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": manyPaths(1001)}, "1001 paths in one call; the limit is 1000"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "cc": manyPaths(1000), "subject": "s", "body_md": "b"}, "1001 recipients; the limit is 1000"},
		{"file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"src/" + strings.Repeat("a", 1030)}}, "is 1034 bytes; the limit is 1024"},
		{"force_release_file_reservation", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "file_reservation_id": 42}, "not found"},
		{"set_contact_policy", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "policy": "friends"}, "contacts_only"},
		{"respond_contact", map[string]any{"project_key": "/p/app", "to_agent": "GreenDog", "from_agent": "Ghost", "accept": true}, "Agent 'Ghost' not found"},
		{"macro_contact_handshake", map[string]any{"project_key": "/p/app", "requester": "GreenDog"}, "target"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b", "attachment_paths": []string{"/x.png"}}, "attachments"},
		{"send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "b", "unknown_arg": 1}, "unknown_arg"},
	})
}

// refusal is a tool call the server must refuse, and a part of the error
// text it must answer.
type refusal struct {
	tool string
	args map[string]any
	want string
}

// checkRefusals makes each call and checks that its error names want (a
// protocol error or a success ends the test: refusals are tool errors).
func (h *amHarness) checkRefusals(cases []refusal) {
	h.t.Helper()
	for i, c := range cases {
		if got := h.callErr(c.tool, c.args); !strings.Contains(got, c.want) {
			h.t.Errorf("case %d, %s: error %q, want it to contain %q", i, c.tool, got, c.want)
		}
	}
}

func manyPaths(n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("src/f%d.go", i)
	}
	return paths
}

// TestAgentMailFlexibleArguments: what reference clients send beyond the
// strict types still works (a single string for a list, a quoted id,
// compatibility-only arguments).
func TestAgentMailFlexibleArguments(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/app", "GreenDog", "BlueLake", "RedFox")
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": "BlueLake, RedFox", "subject": "s",
		"body_md": "b", "format": "json", "sender_token": "x", "auto_contact_if_blocked": true}, &sent)
	if to := sent.Deliveries[0].Payload.To; !slices.Equal(to, []string{"BlueLake", "RedFox"}) {
		t.Fatalf("to = %v", to)
	}
	var read agentmail.ReadResult
	h.call("mark_message_read", map[string]any{"project_key": "p-app", "agent_name": "bluelake", "message_id": "1", "registration_token": "t"}, &read)
	if !read.Read || read.MessageID != 1 {
		t.Fatalf("read: %+v", read)
	}
}

// TestAgentMailInboxFilters covers fetch_inbox's filters and ordering.
func TestAgentMailInboxFilters(t *testing.T) {
	t.Parallel()
	h, clock := newAMHarnessClocked(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	send := func(subject, importance, thread string) int64 {
		var out agentmail.SendResult
		args := map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": subject, "body_md": subject, "importance": importance}
		if thread != "" {
			args["thread_id"] = thread
		}
		h.call("send_message", args, &out)
		clock.Advance(time.Second)
		return out.Deliveries[0].Payload.ID
	}
	a := send("a", "low", "T-1")
	mid := clock.Now()
	clock.Advance(time.Second)
	b := send("b", "urgent", "")
	c := send("c", "high", "T-1")
	d := send("d", "normal", "")
	h.call("mark_message_read", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "message_id": d}, nil)
	base := map[string]any{"project_key": "/p/app", "agent_name": "BlueLake"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	ids := func(es []inboxEntry) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	cases := []struct {
		name string
		args map[string]any
		want []int64
	}{
		{"newest first", base, []int64{d, c, b, a}},
		{"limit", with("limit", 2), []int64{d, c}},
		{"unread_only", with("unread_only", true), []int64{c, b, a}},
		{"urgent_only (none asks for an ack)", with("urgent_only", true), nil}, // see TestContractFetchInboxUrgentOnly
		{"thread_id", with("thread_id", "T-1"), []int64{c, a}},
		{"since_ts", with("since_ts", mid.Format(time.RFC3339Nano)), []int64{d, c, b}},
	}
	for _, tc := range cases {
		if got := ids(h.inbox(tc.args)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := h.inbox(base); got[0].BodyMD != nil {
		t.Error("bodies returned without include_bodies")
	}
}

// newFakeClock is a stopped clock for TTL and staleness tests.
func newFakeClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

// TestAgentMailProfileUnknown: a profile New does not know is refused, not
// taken for the full set.
func TestAgentMailProfileUnknown(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	_, err := New(Deps{Version: "test", Tools: []string{config.ToolsAgentMail}, AgentMail: h.svc, AgentMailProfile: "core"})
	if err == nil || !strings.Contains(err.Error(), `"core"`) {
		t.Fatalf("New with profile core: %v", err)
	}
}

// TestAttachmentsPolicyValues: every value the contract names for
// attachments_policy (inline, attach, deny), auto and the earlier file are
// accepted and kept as given.
func TestAttachmentsPolicyValues(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	h.setup("/p/app")
	for _, v := range []string{"attach", "inline", "deny", "auto", "file"} {
		var prof agentmail.AgentProfile
		h.call("register_agent", map[string]any{"project_key": "/p/app", "name": "GreenDog", "program": "p", "model": "m", "attachments_policy": v}, &prof)
		if prof.AttachmentsPolicy != v {
			t.Errorf("attachments_policy %q: profile says %q", v, prof.AttachmentsPolicy)
		}
	}
}
