package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// chClock is a race-free adjustable clock: real time plus an offset, so
// the store's group commit and timeouts still see time pass.
type chClock struct{ off atomic.Int64 }

func (c *chClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *chClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// compatService opens a Service on the store at path (see openService),
// on clock when it is not nil.
func compatService(t testing.TB, path string, clock *chClock) *agentmail.Service {
	t.Helper()
	var opts []func(*agentmail.Options)
	if clock != nil {
		opts = append(opts, func(o *agentmail.Options) { o.Now = clock.Now })
	}
	svc, _ := openService(t, path, opts...)
	return svc
}

// compatStores maps a service compatService opened to its store, whose
// storage ports the channels and mailbox sets need (Deps.SetStores).
var compatStores sync.Map

// setStores returns the storage ports of a service compatService opened.
func setStores(t testing.TB, svc *agentmail.Service) SetStores {
	t.Helper()
	st, ok := compatStores.Load(svc)
	if !ok {
		t.Fatal("setStores: the service was not opened by compatService")
	}
	return st.(amstore.Store)
}

// connectCompat connects a real client (protocol 2025-11-25) to a server
// with the given tool sets over svc, and wraps it in the agent-mail
// harness so its call helpers (text == structuredContent check) apply.
func connectCompat(t testing.TB, svc *agentmail.Service, sets []string, co SetOptions) *amHarness {
	t.Helper()
	srv, err := New(Deps{Version: "test", Tools: sets, AgentMail: svc, SetStores: setStores(t, svc), SetOptions: co})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv)
	return &amHarness{t: t, ctx: context.Background(), cs: cs, svc: svc}
}

// newChannels is a channels server on a fresh store, for project dir.
func newChannels(t *testing.T, clock *chClock, co SetOptions) (*amHarness, string) {
	t.Helper()
	dir := t.TempDir()
	if co.ProjectKey == "" {
		co.ProjectKey = dir
	}
	path := amtest.DSN(t)
	return connectCompat(t, compatService(t, path, clock), []string{config.ToolsChannels}, co), path
}

func toolNames(t *testing.T, h *amHarness) []string {
	t.Helper()
	res, err := h.cs.ListTools(h.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name) // risk, title, schema: TestToolsDeclareTheirRisk
	}
	slices.Sort(names)
	return names
}

// TestChannelsToolList: the set is exactly the reference's nine tools.
func TestChannelsToolList(t *testing.T) {
	t.Parallel()
	h, _ := newChannels(t, nil, SetOptions{})
	want := []string{"announce_change", "claim_files", "get_changes", "get_file_claims", "heartbeat", "read_messages", "register", "release_files", "send_message"}
	if got := toolNames(t, h); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func chRegister(t *testing.T, h *amHarness, name, role string) string {
	t.Helper()
	var r struct {
		AgentID string `json:"agent_id"`
	}
	h.call("register", map[string]any{"name": name, "role": role}, &r)
	if !uuidRE.MatchString(r.AgentID) {
		t.Fatalf("agent_id %q is not a v4 UUID", r.AgentID)
	}
	return r.AgentID
}

// TestChannelsErrors: every error condition of the reference, with its
// exact text (clients match on them).
func TestChannelsErrors(t *testing.T) {
	t.Parallel()
	h, _ := newChannels(t, nil, SetOptions{})
	id := chRegister(t, h, "coder-1", "coder")
	ghost := "00000000-0000-4000-8000-000000000000"
	cases := []struct {
		tool string
		args map[string]any
		want string // exact, or prefix when it ends in "…"
	}{
		{"register", map[string]any{"name": "", "role": "coder"}, "name is required"},
		{"register", map[string]any{"name": "x", "role": " "}, "role is required"},
		{"heartbeat", map[string]any{"agent_id": ""}, "agent_id is required"},
		{"heartbeat", map[string]any{"agent_id": ghost}, `heartbeat: agent "` + ghost + `" not found`},
		{"send_message", map[string]any{"agent_id": "", "subject": "s", "body": "b"}, "agent_id is required"},
		{"send_message", map[string]any{"agent_id": id, "subject": "", "body": "b"}, "subject is required"},
		{"send_message", map[string]any{"agent_id": id, "subject": "s", "body": ""}, "body is required"},
		{"send_message", map[string]any{"agent_id": ghost, "subject": "s", "body": "b"}, `agent "` + ghost + `" is not registered`},
		{"read_messages", map[string]any{"agent_id": ""}, "agent_id is required"},
		{"read_messages", map[string]any{"agent_id": ghost}, `agent "` + ghost + `" is not registered`},
		{"read_messages", map[string]any{"agent_id": id, "since": "yesterday"}, "parsing since timestamp: …"},
		{"claim_files", map[string]any{"agent_id": "", "files": []string{"a"}}, "agent_id is required"},
		{"claim_files", map[string]any{"agent_id": id, "files": []string{}}, "files is required"},
		{"claim_files", map[string]any{"agent_id": ghost, "files": []string{"a"}}, `agent "` + ghost + `" is not registered`},
		{"release_files", map[string]any{"agent_id": "", "files": []string{"a"}}, "agent_id is required"},
		{"release_files", map[string]any{"agent_id": id, "files": []string{}}, "files is required"},
		{"announce_change", map[string]any{"agent_id": "", "file_path": "a", "summary": "s"}, "agent_id is required"},
		{"announce_change", map[string]any{"agent_id": id, "file_path": "", "summary": "s"}, "file_path is required"},
		{"announce_change", map[string]any{"agent_id": id, "file_path": "a", "summary": ""}, "summary is required"},
		{"announce_change", map[string]any{"agent_id": ghost, "file_path": "a", "summary": "s"}, `agent "` + ghost + `" is not registered`},
		{"get_changes", map[string]any{"since": "2025-13-01"}, "parsing since timestamp: …"},
	}
	for _, c := range cases {
		t.Run(c.tool+"/"+c.want, func(t *testing.T) {
			got := h.callErr(c.tool, c.args)
			if p, ok := strings.CutSuffix(c.want, "…"); ok {
				if !strings.HasPrefix(got, p) {
					t.Fatalf("error %q, want prefix %q", got, p)
				}
			} else if got != c.want {
				t.Fatalf("error %q, want %q", got, c.want)
			}
		})
	}
}

func chRead(t *testing.T, h *amHarness, args map[string]any) []channels.MessageView {
	t.Helper()
	var r struct {
		Messages []channels.MessageView `json:"messages"`
	}
	h.call("read_messages", args, &r)
	return r.Messages
}

// chClaimAnswer is the decoded claim_files answer.
type chClaimAnswer struct {
	Claimed   []string `json:"claimed"`
	Conflicts []struct {
		File   string `json:"file"`
		HeldBy string `json:"held_by"`
	} `json:"conflicts"`
}

type chClaim struct {
	FilePath  string `json:"file_path"`
	AgentID   string `json:"agent_id"`
	ClaimedAt string `json:"claimed_at"`
}

func chClaims(t *testing.T, h *amHarness, files []string) []chClaim {
	t.Helper()
	var r struct {
		Claims []chClaim `json:"claims"`
	}
	args := map[string]any{}
	if files != nil {
		args["files"] = files
	}
	h.call("get_file_claims", args, &r)
	return r.Claims
}

// TestChannelsWorkflow walks the reference's typical workflow with two
// agents: messages on channels, partial claim conflicts on normalised
// paths, releases, and change announcements.
func TestChannelsWorkflow(t *testing.T) {
	t.Parallel()
	h, _ := newChannels(t, nil, SetOptions{})
	a := chRegister(t, h, "coder-1", "coder")
	b := chRegister(t, h, "coder-1", "reviewer") // names need not be unique
	if a == b {
		t.Fatal("two registrations got the same agent_id")
	}
	var ok struct {
		OK bool `json:"ok"`
	}
	h.call("heartbeat", map[string]any{"agent_id": a}, &ok)
	if !ok.OK {
		t.Fatal("heartbeat: ok false")
	}

	// Messages: channel defaults to broadcast; ids are integers, increasing.
	var s1, s2 struct {
		MessageID int64 `json:"message_id"`
	}
	h.call("send_message", map[string]any{"agent_id": a, "subject": "hello", "body": "starting"}, &s1)
	h.call("send_message", map[string]any{"agent_id": b, "channel": "review", "subject": "r", "body": "look"}, &s2)
	if s1.MessageID <= 0 || s2.MessageID <= s1.MessageID {
		t.Fatalf("message ids %d, %d", s1.MessageID, s2.MessageID)
	}
	all := chRead(t, h, map[string]any{"agent_id": b})
	if len(all) != 2 || all[0].Channel != "broadcast" || all[0].SenderID != a || all[1].Channel != "review" || all[1].SenderID != b {
		t.Fatalf("read all = %+v", all)
	}
	if _, err := time.Parse(time.RFC3339, all[0].CreatedAt); err != nil {
		t.Fatalf("created_at %q is not RFC 3339", all[0].CreatedAt)
	}
	if got := chRead(t, h, map[string]any{"agent_id": a, "channel": "review"}); len(got) != 1 || got[0].Body != "look" {
		t.Fatalf("read review = %+v", got)
	}
	// since is exclusive: polling with the last created_at returns nothing new.
	if got := chRead(t, h, map[string]any{"agent_id": a, "since": all[1].CreatedAt}); len(got) != 0 {
		t.Fatalf("read since last = %+v", got)
	}

	// Claims: ./x and x are one file; the second claimer gets a partial conflict.
	var c1, c2 chClaimAnswer
	h.call("claim_files", map[string]any{"agent_id": a, "files": []string{"./internal/auth/jwt.go"}}, &c1)
	if !slices.Equal(c1.Claimed, []string{"internal/auth/jwt.go"}) || len(c1.Conflicts) != 0 {
		t.Fatalf("claim a = %+v", c1)
	}
	h.call("claim_files", map[string]any{"agent_id": b, "files": []string{"internal/auth/jwt.go", "internal/auth/jwt_test.go"}}, &c2)
	if !slices.Equal(c2.Claimed, []string{"internal/auth/jwt_test.go"}) || len(c2.Conflicts) != 1 ||
		c2.Conflicts[0].File != "internal/auth/jwt.go" || c2.Conflicts[0].HeldBy != a {
		t.Fatalf("claim b (partial conflict) = %+v", c2)
	}
	// Re-claiming one's own file is a no-op that still reports it claimed.
	h.call("claim_files", map[string]any{"agent_id": a, "files": []string{"internal//auth/jwt.go"}}, &c1)
	if !slices.Equal(c1.Claimed, []string{"internal/auth/jwt.go"}) || len(c1.Conflicts) != 0 {
		t.Fatalf("re-claim = %+v", c1)
	}
	if got := chClaims(t, h, nil); len(got) != 2 || got[0].FilePath != "internal/auth/jwt.go" || got[0].AgentID != a || got[1].AgentID != b {
		t.Fatalf("claims = %+v", got)
	}
	if got := chClaims(t, h, []string{"./internal/auth/jwt_test.go", "nope.go"}); len(got) != 1 || got[0].AgentID != b {
		t.Fatalf("claims filtered = %+v", got)
	}
	// Releasing is for one's own claims only.
	var rel struct {
		Released []string `json:"released"`
	}
	h.call("release_files", map[string]any{"agent_id": b, "files": []string{"internal/auth/jwt.go"}}, &rel)
	if len(rel.Released) != 0 {
		t.Fatalf("b released a's claim: %+v", rel)
	}
	h.call("release_files", map[string]any{"agent_id": a, "files": []string{"./internal/auth/jwt.go"}}, &rel)
	if !slices.Equal(rel.Released, []string{"internal/auth/jwt.go"}) {
		t.Fatalf("release = %+v", rel)
	}
	if got := chClaims(t, h, nil); len(got) != 1 || got[0].AgentID != b {
		t.Fatalf("claims after release = %+v", got)
	}

	// Changes, filtered by agent and by time.
	var ch1, ch2 struct {
		ChangeID int64 `json:"change_id"`
	}
	h.call("announce_change", map[string]any{"agent_id": a, "file_path": "./internal/auth/jwt.go", "summary": "expiry"}, &ch1)
	h.call("announce_change", map[string]any{"agent_id": b, "file_path": "internal/auth/jwt_test.go", "summary": "tests"}, &ch2)
	type change struct {
		ID          int64  `json:"id"`
		AgentID     string `json:"agent_id"`
		FilePath    string `json:"file_path"`
		Summary     string `json:"summary"`
		AnnouncedAt string `json:"announced_at"`
	}
	var changes struct {
		Changes []change `json:"changes"`
	}
	h.call("get_changes", map[string]any{}, &changes)
	if len(changes.Changes) != 2 || changes.Changes[0].ID != ch1.ChangeID || changes.Changes[0].FilePath != "internal/auth/jwt.go" {
		t.Fatalf("changes = %+v", changes)
	}
	h.call("get_changes", map[string]any{"agent_id": b}, &changes)
	if len(changes.Changes) != 1 || changes.Changes[0].Summary != "tests" {
		t.Fatalf("changes by b = %+v", changes)
	}
	h.call("get_changes", map[string]any{"since": changes.Changes[0].AnnouncedAt}, &changes)
	if len(changes.Changes) != 0 {
		t.Fatalf("changes since last = %+v", changes)
	}
}

// TestChannelsStaleSweep: an agent silent past the stale timeout is removed
// by whichever process calls next — claims released, one agent-stale
// broadcast — and two "processes" sweeping the same store retire it once.
func TestChannelsStaleSweep(t *testing.T) {
	t.Parallel()
	clock := &chClock{}
	dir := t.TempDir()
	co := SetOptions{ProjectKey: dir, StaleAfter: time.Minute, SweepInterval: time.Millisecond}
	path := amtest.DSN(t)
	p1 := connectCompat(t, compatService(t, path, clock), []string{config.ToolsChannels}, co)
	p2 := connectCompat(t, compatService(t, path, clock), []string{config.ToolsChannels}, co)

	dead := chRegister(t, p1, "coder-3", "coder")
	live := chRegister(t, p2, "coder-4", "coder")
	p1.call("claim_files", map[string]any{"agent_id": dead, "files": []string{"a.go", "b.go"}}, nil)

	clock.Advance(40 * time.Second)
	p2.call("heartbeat", map[string]any{"agent_id": live}, nil)
	if got := chClaims(t, p2, nil); len(got) != 2 {
		t.Fatalf("claims before the timeout = %+v", got)
	}
	clock.Advance(30 * time.Second) // dead: 70 s silent; live: 30 s
	// Both processes sweep (each call starts with a sweep); the marking
	// update inside one write transaction makes only one of them act.
	done := make(chan struct{})
	go func() { defer close(done); chClaims(t, p1, nil) }()
	got := chClaims(t, p2, nil)
	<-done
	if len(got) != 0 {
		t.Fatalf("claims of the stale agent were not released: %+v", got)
	}
	msgs := chRead(t, p2, map[string]any{"agent_id": live, "channel": "broadcast"})
	var stale []channels.MessageView
	for _, m := range msgs {
		if m.Subject == "agent-stale" {
			stale = append(stale, m)
		}
	}
	if len(stale) != 1 {
		t.Fatalf("agent-stale messages = %+v, want exactly one", msgs)
	}
	if want := "Agent coder-3 (role: coder) went stale and was removed. Its file claims have been released."; stale[0].Body != want || stale[0].Channel != "broadcast" {
		t.Fatalf("stale message = %+v", stale[0])
	}
	// The stale agent is gone; the live one is not.
	if e := p1.callErr("heartbeat", map[string]any{"agent_id": dead}); e != `heartbeat: agent "`+dead+`" not found` {
		t.Fatalf("heartbeat of stale agent: %q", e)
	}
	p2.call("heartbeat", map[string]any{"agent_id": live}, nil)
	// Its name is free again: registering it anew works.
	chRegister(t, p1, "coder-3", "coder")
}

// TestChannelsOneCore: channel messages are threads of the agentmail core
// and claims are its reservations, in both directions.
func TestChannelsOneCore(t *testing.T) {
	t.Parallel()
	key := t.TempDir()
	h, _ := newChannels(t, nil, SetOptions{ProjectKey: key})
	a := chRegister(t, h, "coder-1", "coder")
	h.call("send_message", map[string]any{"agent_id": a, "subject": "hi all", "body": "broadcast body"}, nil)
	th, err := h.svc.Thread(h.ctx, key, channels.ThreadPrefix+"broadcast", true)
	if err != nil || len(th.Messages) != 1 || th.Messages[0].Subject != "hi all" || th.Messages[0].From != "coder-1" {
		t.Fatalf("agentmail thread channel.broadcast = %+v, %v", th, err)
	}

	// A claim is a reservation: an agentmail agent reserving the file sees it.
	h.call("claim_files", map[string]any{"agent_id": a, "files": []string{"src/x.go"}}, nil)
	if _, err := h.svc.RegisterAgent(h.ctx, agentmail.RegisterParams{ProjectKey: key, Name: "GreenCastle"}); err != nil {
		t.Fatal(err)
	}
	res, err := h.svc.Reserve(h.ctx, agentmail.ReserveParams{ProjectKey: key, Agent: "GreenCastle", Paths: []string{"src/*.go"}})
	if err != nil || len(res.Conflicts) != 1 || res.Conflicts[0].Holders[0].Agent != "coder-1" {
		t.Fatalf("agentmail reserve over a claim = %+v, %v", res, err)
	}
	// Agentmail mail in thread "channel.coordination" is channel traffic;
	// its sender has no UUID, so sender_id is the agent's name.
	if _, err := h.svc.Send(h.ctx, agentmail.SendParams{ProjectKey: key, Sender: "GreenCastle", To: []string{"coder-1"},
		Subject: "from agentmail", BodyMD: "b", ThreadID: "channel.coordination"}); err != nil {
		t.Fatal(err)
	}
	if got := chRead(t, h, map[string]any{"agent_id": a, "channel": "coordination"}); len(got) != 1 || got[0].SenderID != "GreenCastle" || got[0].Subject != "from agentmail" {
		t.Fatalf("channel coordination = %+v", got)
	}
	// And the reservation (a glob) blocks a channels claim under it.
	b := chRegister(t, h, "coder-2", "coder")
	var c chClaimAnswer
	h.call("claim_files", map[string]any{"agent_id": b, "files": []string{"src/y.go"}}, &c)
	if len(c.Claimed) != 0 || len(c.Conflicts) != 1 || c.Conflicts[0].HeldBy != "GreenCastle" {
		t.Fatalf("claim under a reservation = %+v", c)
	}
}

// TestChannelsStaleCrossProcess: the agent runs in another OS process that
// registers, claims and exits without ever heartbeating, on its own (real)
// clock; this process sees its claim, and sees it kept at a sweep StaleAfter
// after the agent's registration (not earlier), and released with the
// agent-stale broadcast at a sweep StaleAfter + SweepInterval after its
// last call (no later). This process's clock stands where the test puts it (a fake
// clock, as in TestChannelsStaleSweep), so the test does not wait out
// StaleAfter in real time: only the registration crosses the process
// boundary, and its time is the helper's.
func TestChannelsStaleCrossProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv("MAILGATE_CH_HELPER_DB") != "" {
		t.Skip("helper mode")
	}
	dir := t.TempDir()
	path := amtest.DSN(t)
	const staleAfter, sweep = time.Hour, 100 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^TestChannelsHelperProcess$", "-test.v")
	cmd.Env = append(os.Environ(), "MAILGATE_CH_HELPER_DB="+path, "MAILGATE_CH_HELPER_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`AGENT=(\S+) FROM=(\S+) TO=(\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("helper printed no agent id:\n%s", out)
	}
	dead := string(m[1])
	// The helper registered the agent and made its claim between from and
	// to, by its clock.
	from, err := time.Parse(time.RFC3339Nano, string(m[2]))
	if err != nil {
		t.Fatal(err)
	}
	to, err := time.Parse(time.RFC3339Nano, string(m[3]))
	if err != nil {
		t.Fatal(err)
	}

	clock := testutil.NewClock(time.Now())
	svc, _ := openService(t, path, func(o *agentmail.Options) { o.Now = clock.Now })
	h := connectCompat(t, svc, []string{config.ToolsChannels},
		SetOptions{ProjectKey: dir, StaleAfter: staleAfter, SweepInterval: sweep})
	if got := chClaims(t, h, nil); len(got) != 1 || got[0].AgentID != dead {
		t.Fatalf("the helper's claim is not visible here: %+v", got)
	}
	// Just short of StaleAfter after the registration (each call sweeps
	// first: the clock moved past the sweep interval), the claim stays.
	// The watcher registers now, so that it is not itself stale at the
	// next step.
	clock.Set(from.Add(staleAfter - time.Millisecond))
	live := chRegister(t, h, "watcher", "reviewer")
	if got := chClaims(t, h, nil); len(got) != 1 || got[0].AgentID != dead {
		t.Fatalf("the helper's claim was released before StaleAfter: %+v", got)
	}
	// StaleAfter + SweepInterval after the helper's last call, at the latest,
	// the claim is released and the broadcast says why.
	clock.Set(to.Add(staleAfter + sweep))
	claims := chClaims(t, h, nil)
	msgs := chRead(t, h, map[string]any{"agent_id": live, "channel": "broadcast"})
	if len(claims) != 0 || len(msgs) != 1 || msgs[0].Subject != "agent-stale" || msgs[0].SenderID != dead {
		t.Fatalf("StaleAfter + SweepInterval after the helper's last call: claims %+v, broadcast %+v", claims, msgs)
	}
}

// TestChannelsHelperProcess is the other process of the cross-process test
// (it does nothing in a normal run).
func TestChannelsHelperProcess(t *testing.T) {
	t.Parallel()
	path := os.Getenv("MAILGATE_CH_HELPER_DB")
	if path == "" {
		t.Skip("only run as the helper of TestChannelsStaleCrossProcess")
	}
	h := connectCompat(t, compatService(t, path, nil), []string{config.ToolsChannels},
		SetOptions{ProjectKey: os.Getenv("MAILGATE_CH_HELPER_DIR")})
	before := time.Now()
	id := chRegister(t, h, "coder-9", "coder")
	h.call("claim_files", map[string]any{"agent_id": id, "files": []string{"pkg/a.go"}}, nil)
	after := time.Now()
	os.Stdout.WriteString("AGENT=" + id + " FROM=" + before.UTC().Format(time.RFC3339Nano) + " TO=" + after.UTC().Format(time.RFC3339Nano) + "\n")
}
