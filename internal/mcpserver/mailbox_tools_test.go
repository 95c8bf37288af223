package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/mcpstdio"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
	"github.com/mailgate/mailgate/internal/tmux"
)

// noTmux hides any tmux the test runner itself may run in, so identity
// comes from AgentName as it does outside tmux.
func noTmux(k string) string {
	if k == "TMUX" || k == "TMUX_PANE" {
		return ""
	}
	return os.Getenv(k)
}

// mbPair is two mailbox agents (alice, bob) outside tmux: two servers on one
// store and project, as two agents' processes would be.
func mbPair(t *testing.T) (alice, bob *amHarness, svc *agentmail.Service, dir string) {
	t.Helper()
	dir = t.TempDir()
	svc = compatService(t, amtest.DSN(t), nil)
	alice = connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, AgentName: "alice", Getenv: noTmux})
	bob = connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, AgentName: "bob", Getenv: noTmux})
	return
}

// mbText calls a mailbox tool and returns its single text and isError.
func mbText(t *testing.T, h *amHarness, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(h.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", tool, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func mbOK(t *testing.T, h *amHarness, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := mbText(t, h, tool, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %q", tool, args, text)
	}
	return text
}

type mbRecipients struct {
	Recipients []mailboxset.Recipient `json:"recipients"`
}

// TestMailboxToolList: US1 — exactly four tools, each with a description
// and a parameter schema.
func TestMailboxToolList(t *testing.T) {
	t.Parallel()
	alice, _, _, _ := mbPair(t)
	want := []string{"list-recipients", "receive", "send", "status"}
	if got := toolNames(t, alice); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
}

// TestMailboxCycle: SC-006 and US2/US3/US5 — status, list recipients, send,
// receive (oldest first, marked read), and "No unread messages".
func TestMailboxCycle(t *testing.T) {
	t.Parallel()
	alice, bob, _, _ := mbPair(t)
	if got := mbOK(t, alice, "status", map[string]any{"status": "ready"}); got != `{"status":"ok"}` {
		t.Fatalf("status = %s", got)
	}
	mbOK(t, bob, "status", map[string]any{"status": "ready"}) // bob is now a registered agent
	var rs mbRecipients
	if err := json.Unmarshal([]byte(mbOK(t, alice, "list-recipients", nil)), &rs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rs.Recipients, []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "bob", IsCurrent: false}}) {
		t.Fatalf("recipients = %+v", rs)
	}
	if got := mbOK(t, bob, "receive", nil); got != "No unread messages" {
		t.Fatalf("empty receive = %q", got)
	}
	var ids []string
	for _, m := range []string{"first", "second\nline two"} {
		got := mbOK(t, alice, "send", map[string]any{"recipient": "bob", "message": m})
		id, ok := strings.CutSuffix(strings.TrimPrefix(got, "Message #"), " sent")
		if !ok || !strings.HasPrefix(got, "Message #") {
			t.Fatalf("send answer %q, want \"Message #ID sent\"", got)
		}
		ids = append(ids, id)
	}
	for i, want := range []string{"first", "second\nline two"} {
		var m mailboxset.Message
		if err := json.Unmarshal([]byte(mbOK(t, bob, "receive", nil)), &m); err != nil {
			t.Fatal(err)
		}
		if m.From != "alice" || m.ID != ids[i] || m.Message != want {
			t.Fatalf("receive %d = %+v, want from alice id %s %q", i, m, ids[i], want)
		}
	}
	if got := mbOK(t, bob, "receive", nil); got != "No unread messages" {
		t.Fatalf("receive after reading all = %q (messages must be marked read)", got)
	}
}

// TestMailboxErrors: FR-009/FR-016 texts, self and ignored recipients.
func TestMailboxErrors(t *testing.T) {
	t.Parallel()
	alice, bob, _, dir := mbPair(t)
	mbOK(t, bob, "status", map[string]any{"status": "ready"})
	carol := connectCompat(t, alice.svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, AgentName: "carol", Getenv: noTmux})
	mbOK(t, carol, "status", map[string]any{"status": "ready"})
	if err := os.WriteFile(filepath.Join(dir, ".agentmailignore"), []byte("# helpers\ncarol\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"unknown recipient", "send", map[string]any{"recipient": "zed", "message": "hi"}, "recipient not found"},
		{"self", "send", map[string]any{"recipient": "alice", "message": "hi"}, "recipient not found"},
		{"ignored", "send", map[string]any{"recipient": "carol", "message": "hi"}, "recipient not found"},
		{"empty message", "send", map[string]any{"recipient": "bob", "message": ""}, "no message provided"},
		{"bad status", "status", map[string]any{"status": "busy"}, "Invalid status: busy. Valid: ready, work, offline"},
		{"status case", "status", map[string]any{"status": "Ready"}, "Invalid status: Ready. Valid: ready, work, offline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, isErr := mbText(t, alice, c.tool, c.args)
			if !isErr || got != c.want {
				t.Fatalf("%s = %q (isError %v), want error %q", c.tool, got, isErr, c.want)
			}
		})
	}
	// Ignored windows are hidden from the list, the caller never is.
	var rs mbRecipients
	json.Unmarshal([]byte(mbOK(t, alice, "list-recipients", nil)), &rs)
	if !slices.Equal(rs.Recipients, []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "bob", IsCurrent: false}}) {
		t.Fatalf("recipients with carol ignored = %+v", rs)
	}
	json.Unmarshal([]byte(mbOK(t, carol, "list-recipients", nil)), &rs)
	if !slices.Contains(rs.Recipients, mailboxset.Recipient{Name: "carol", IsCurrent: true}) {
		t.Fatalf("carol's own list hides carol: %+v", rs)
	}
}

// TestMailboxSizeLimit: FR-013 — over 65,536 bytes is a JSON-RPC error (not a
// tool answer); exactly 65,536 is accepted.
func TestMailboxSizeLimit(t *testing.T) {
	t.Parallel()
	alice, bob, _, _ := mbPair(t)
	mbOK(t, bob, "status", map[string]any{"status": "ready"})
	mbOK(t, alice, "send", map[string]any{"recipient": "bob", "message": strings.Repeat("x", mailboxset.MaxBytes)})
	_, err := alice.cs.CallTool(alice.ctx, &mcp.CallToolParams{Name: "send",
		Arguments: map[string]any{"recipient": "bob", "message": strings.Repeat("é", mailboxset.MaxBytes/2) + "x"}})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || !strings.Contains(wire.Message, "64KB") {
		t.Fatalf("oversized send: err = %v, want a JSON-RPC invalid-params error naming the 64KB limit", err)
	}
}

// TestMailboxStatusNotified: US4.3 — work and offline reset the notified
// flag; ready keeps it.
func TestMailboxStatusNotified(t *testing.T) {
	t.Parallel()
	_, bob, svc, dir := mbPair(t)
	mb := mailboxset.New(svc, setStores(t, svc).Mailboxes(), dir)
	for _, c := range []struct {
		status      string
		keepsNotify bool
	}{{"ready", true}, {"work", false}, {"offline", false}} {
		mbOK(t, bob, "status", map[string]any{"status": "ready"})
		if err := mb.MarkNotified(context.Background(), "bob"); err != nil {
			t.Fatal(err)
		}
		mbOK(t, bob, "status", map[string]any{"status": c.status})
		st, err := mb.State(context.Background(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != c.status || st.NotifiedAt.IsZero() != !c.keepsNotify {
			t.Fatalf("after status %s: %+v (notified kept: want %v)", c.status, st, c.keepsNotify)
		}
	}
}

// TestMailboxOneCore: mailbox mail is agent mail. A mailbox send lands in
// the recipient's agentmail inbox, and agentmail mail to the same name is
// what mailbox receive pops; receiving marks the agentmail copy read.
func TestMailboxOneCore(t *testing.T) {
	t.Parallel()
	alice, bob, svc, dir := mbPair(t)
	mbOK(t, bob, "status", map[string]any{"status": "ready"})
	mbOK(t, alice, "send", map[string]any{"recipient": "bob", "message": "via mailbox"})
	inbox, err := svc.FetchInbox(context.Background(), agentmail.InboxParams{ProjectKey: dir, Agent: "bob", IncludeBodies: true})
	if err != nil || len(inbox) != 1 || inbox[0].From != "alice" || inbox[0].BodyMD == nil || *inbox[0].BodyMD != "via mailbox" || inbox[0].ReadTS != nil {
		t.Fatalf("bob's agentmail inbox = %+v, %v", inbox, err)
	}
	mbOK(t, bob, "receive", nil)
	inbox, _ = svc.FetchInbox(context.Background(), agentmail.InboxParams{ProjectKey: dir, Agent: "bob"})
	if len(inbox) != 1 || inbox[0].ReadTS == nil {
		t.Fatalf("mailbox receive did not mark the agentmail copy read: %+v", inbox)
	}
	if _, err := svc.Send(context.Background(), agentmail.SendParams{ProjectKey: dir, Sender: "alice", To: []string{"bob"}, Subject: "s", BodyMD: "via agentmail"}); err != nil {
		t.Fatal(err)
	}
	var m mailboxset.Message
	json.Unmarshal([]byte(mbOK(t, bob, "receive", nil)), &m)
	if m.From != "alice" || m.Message != "via agentmail" {
		t.Fatalf("mailbox receive of agentmail mail = %+v", m)
	}
}

// TestMailboxNoIdentity: outside tmux with no AGENT_NAME the tools say how
// to get an identity instead of guessing one.
func TestMailboxNoIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := connectCompat(t, compatService(t, amtest.SQLite(t), nil), []string{config.ToolsMailbox},
		SetOptions{ProjectKey: dir, Getenv: func(string) string { return "" }})
	if got, isErr := mbText(t, h, "receive", nil); !isErr || !strings.Contains(got, "AGENT_NAME") {
		t.Fatalf("receive without identity = %q (isError %v)", got, isErr)
	}
}

// tmuxSession starts a private tmux server (its own socket) with a session
// whose windows are names; it returns the TMUX value and each window's pane.
func tmuxSession(t *testing.T, names ...string) (tmuxEnvVar string, panes map[string]string, tm func(args ...string) error) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install -y tmux): the real-tmux mailbox test needs it")
	}
	sockDir, err := os.MkdirTemp("", "mgtmux") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(sockDir, "s")
	tm = func(args ...string) error {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux %v: %v: %s", args, err, out)
		}
		return nil
	}
	t.Cleanup(func() { tm("kill-server"); os.RemoveAll(sockDir) })
	if err := tm("new-session", "-d", "-s", "agents", "-n", names[0], "sleep 600"); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[1:] {
		if err := tm("new-window", "-d", "-t", "agents", "-n", n, "sleep 600"); err != nil {
			t.Fatal(err)
		}
	}
	// A second session: its windows must not show up as recipients.
	if err := tm("new-session", "-d", "-s", "elsewhere", "-n", "stranger", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	panes = map[string]string{}
	for _, n := range names {
		out, err := exec.Command("tmux", "-S", sock, "list-panes", "-t", "agents:"+n, "-F", "#{pane_id}").Output()
		if err != nil {
			t.Fatal(err)
		}
		panes[n] = strings.TrimSpace(string(out))
	}
	out, err := exec.Command("tmux", "-S", sock, "display-message", "-p", "#{pid}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return sock + "," + strings.TrimSpace(string(out)) + ",0", panes, tm
}

// paneEnv is the environment tmux gives a program in pane (AGENT_NAME
// included: inside tmux it must not count).
func paneEnv(tmuxVar, pane string) func(string) string {
	return func(k string) string {
		switch k {
		case "TMUX":
			return tmuxVar
		case "TMUX_PANE":
			return pane
		case "AGENT_NAME":
			return "not-used-inside-tmux"
		}
		return ""
	}
}

// wantSessionEnd kills the tmux session "agents" and wants done to deliver
// tmux.ErrWatchedSessionEnded within 1 s, giving up after wait; who names what
// should notice.
func wantSessionEnd(t *testing.T, tm func(args ...string) error, done <-chan error, who string, wait time.Duration) {
	t.Helper()
	killed := time.Now()
	if err := tm("kill-session", "-t", "agents"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, tmux.ErrWatchedSessionEnded) {
			t.Fatalf("%s stopped with %v, want tmux.ErrWatchedSessionEnded", who, err)
		}
		// Logged, not asserted: a loaded machine is no failure.
		t.Logf("%s noticed the session's end after %v", who, time.Since(killed).Round(time.Millisecond))
	case <-time.After(wait):
		t.Fatalf("%s still running %v after its tmux session ended", who, wait)
	}
}

// TestMailboxRealTmux drives the set inside a real tmux session: identity
// from the window name, recipients from the session's windows (minus
// .agentmailignore, other sessions excluded), and the session watcher
// reporting the session's end within a second.
func TestMailboxRealTmux(t *testing.T) {
	t.Parallel()
	tmuxVar, panes, tm := tmuxSession(t, "alice", "bob", "helper")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".agentmailignore"), []byte("helper\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each "process" sees the environment tmux gives a program in its pane.
	envIn := func(window string) func(string) string { return paneEnv(tmuxVar, panes[window]) }
	svc := compatService(t, amtest.DSN(t), nil)
	alice := connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, Getenv: envIn("alice")})
	bob := connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, Getenv: envIn("bob")})

	var rs mbRecipients
	json.Unmarshal([]byte(mbOK(t, alice, "list-recipients", nil)), &rs)
	if !slices.Equal(rs.Recipients, []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "bob", IsCurrent: false}}) {
		t.Fatalf("recipients in tmux = %+v", rs)
	}
	for _, r := range []string{"helper", "stranger", "alice"} {
		if got, isErr := mbText(t, alice, "send", map[string]any{"recipient": r, "message": "x"}); !isErr || got != "recipient not found" {
			t.Fatalf("send to %s = %q", r, got)
		}
	}
	mbOK(t, alice, "send", map[string]any{"recipient": "bob", "message": "hello from alice's window"})
	var m mailboxset.Message
	json.Unmarshal([]byte(mbOK(t, bob, "receive", nil)), &m)
	if m.From != "alice" || m.Message != "hello from alice's window" {
		t.Fatalf("bob received %+v", m)
	}

	// Session end: the watcher returns tmux.ErrWatchedSessionEnded within 1 s.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() { got <- tmux.WatchSession(ctx, envIn("alice"), 0) }()
	time.Sleep(400 * time.Millisecond) // the watcher is polling a live session
	select {
	case err := <-got:
		t.Fatalf("watcher returned %v while the session is alive", err)
	default:
	}
	wantSessionEnd(t, tm, got, "watcher", time.Minute)
}

// TestMailboxWatchOutsideTmux: no tmux, nothing to watch.
func TestMailboxWatchOutsideTmux(t *testing.T) {
	t.Parallel()
	if err := tmux.WatchSession(context.Background(), func(string) string { return "" }, 0); err != nil {
		t.Fatal(err)
	}
}

// runWithTmuxWatch is the hook serve needs (the same lines are proposed for
// cmd/mailgate/serve.go): serve until the context ends or the tmux session
// does, and report the session's end as the error.
func runWithTmuxWatch(ctx context.Context, srv *mcp.Server, tr mcp.Transport, getenv func(string) string) error {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if err := tmux.WatchSession(runCtx, getenv, 0); err != nil {
			cancel(err)
		}
	}()
	err := srv.Run(runCtx, tr)
	if cause := context.Cause(runCtx); errors.Is(cause, tmux.ErrWatchedSessionEnded) {
		return cause
	}
	return err
}

// TestMailboxServeEndsWithTmuxSession: FR-014 end to end at the server
// level — a mailbox server on the real stdio transport, idle on a stdin
// that never closes, stops within 1 s of its tmux session being killed,
// with tmux.ErrWatchedSessionEnded (which serve turns into exit status 1).
func TestMailboxServeEndsWithTmuxSession(t *testing.T) {
	t.Parallel()
	tmuxVar, panes, tm := tmuxSession(t, "solo")
	getenv := paneEnv(tmuxVar, panes["solo"])
	dir := t.TempDir()
	svc := compatService(t, amtest.DSN(t), nil)
	srv, err := New(Deps{Version: "test", Tools: []string{config.ToolsMailbox},
		AgentMail: svc, SetStores: setStores(t, svc), SetOptions: SetOptions{ProjectKey: dir, Getenv: getenv}})
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe() // stdin stays open: only the session's end can stop the server
	defer stdinW.Close()
	done := make(chan error, 1)
	go func() {
		done <- runWithTmuxWatch(context.Background(), srv, &mcpstdio.Transport{Reader: stdinR, Writer: io.Discard}, getenv)
	}()
	time.Sleep(300 * time.Millisecond)
	wantSessionEnd(t, tm, done, "server", time.Minute)
}

// TestMailboxFollowsTmuxChanges: identity and recipients follow the tmux
// session as it changes under a running server — a renamed window, a new
// window, a closed one — through the real protocol, with no restart.
func TestMailboxFollowsTmuxChanges(t *testing.T) {
	t.Parallel()
	tmuxVar, panes, tm := tmuxSession(t, "alice", "bob")
	getenv := paneEnv(tmuxVar, panes["alice"])
	dir := t.TempDir()
	h := connectCompat(t, compatService(t, amtest.DSN(t), nil), []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, Getenv: getenv})
	recipients := func() []mailboxset.Recipient {
		var rs mbRecipients
		json.Unmarshal([]byte(mbOK(t, h, "list-recipients", nil)), &rs)
		return rs.Recipients
	}
	// tmux notifies after the command returns: poll until the answer changes.
	until := func(what string, want []mailboxset.Recipient) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for got := recipients(); !slices.Equal(got, want); got = recipients() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: recipients = %+v, want %+v", what, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	until("at start", []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "bob", IsCurrent: false}})

	if err := tm("rename-window", "-t", "agents:bob", "robert"); err != nil {
		t.Fatal(err)
	}
	until("after renaming bob", []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "robert", IsCurrent: false}})
	if got, isErr := mbText(t, h, "send", map[string]any{"recipient": "bob", "message": "x"}); !isErr || got != "recipient not found" {
		t.Fatalf("send to the old name = %q", got)
	}
	mbOK(t, h, "send", map[string]any{"recipient": "robert", "message": "x"})

	if err := tm("rename-window", "-t", "agents:alice", "alicia"); err != nil {
		t.Fatal(err)
	}
	until("after renaming the caller's window", []mailboxset.Recipient{{Name: "alicia", IsCurrent: true}, {Name: "robert", IsCurrent: false}})

	if err := tm("new-window", "-d", "-t", "agents", "-n", "carol", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	until("after a new window", []mailboxset.Recipient{{Name: "alicia", IsCurrent: true}, {Name: "robert", IsCurrent: false}, {Name: "carol", IsCurrent: false}})
	mbOK(t, h, "send", map[string]any{"recipient": "carol", "message": "welcome"})

	if err := tm("kill-window", "-t", "agents:robert"); err != nil {
		t.Fatal(err)
	}
	until("after closing robert", []mailboxset.Recipient{{Name: "alicia", IsCurrent: true}, {Name: "carol", IsCurrent: false}})
	if got, isErr := mbText(t, h, "send", map[string]any{"recipient": "robert", "message": "x"}); !isErr || got != "recipient not found" {
		t.Fatalf("send to a closed window = %q", got)
	}
}

// TestMailboxOpsAskTmuxPerCall: the command line's operations (mailgate
// mailbox) know the window and its session as the tools do, without
// attaching a control-mode client to the session for a one-shot command.
func TestMailboxOpsAskTmuxPerCall(t *testing.T) {
	t.Parallel()
	tmuxVar, panes, _ := tmuxSession(t, "alice", "bob")
	getenv := paneEnv(tmuxVar, panes["alice"])
	svc := compatService(t, amtest.DSN(t), nil)
	ops := mailboxset.NewCaller(svc, setStores(t, svc).Mailboxes(), tmux.Client{Getenv: getenv, PerCall: true}, mailboxset.CallerOptions{ProjectKey: t.TempDir(), Getenv: getenv})
	ctx := context.Background()
	if me, err := ops.Identity(ctx); err != nil || me != "alice" {
		t.Fatalf("Identity = %q, %v", me, err)
	}
	rs, err := ops.Recipients(ctx)
	if err != nil || !slices.Equal(rs, []mailboxset.Recipient{{Name: "alice", IsCurrent: true}, {Name: "bob", IsCurrent: false}}) {
		t.Fatalf("Recipients = %+v, %v", rs, err)
	}
	sock, _, _ := strings.Cut(tmuxVar, ",")
	out, err := exec.Command("tmux", "-S", sock, "list-clients", "-F", "#{client_flags}").CombinedOutput()
	if err != nil {
		t.Fatalf("list-clients: %v %s", err, out)
	}
	if strings.Contains(string(out), "control-mode") {
		t.Fatalf("a one-shot command attached a control-mode client: %s", out)
	}
}
