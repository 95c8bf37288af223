package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/store/storetest"
)

// mbWorld is one project and one store for mailbox agents, driven through
// mailgate: `mailgate serve` with the mailbox tools (MCP, in-process) and
// `mailgate mailbox …` (CLI). Identity is AGENT_NAME (no tmux).
type mbWorld struct {
	t       *testing.T
	home    string
	project string
	env     []string
}

func newMBWorld(t *testing.T) *mbWorld {
	t.Helper()
	home, project := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MAILGATE_HOME=" + home,
		"MAILGATE_TOOLS=mailbox", "MAILGATE_LOG_LEVEL=warn"}
	if storetest.PostgresURL() != "" {
		env = append(env, "MAILGATE_DB="+storetest.DSN(t))
	}
	return &mbWorld{t: t, home: home, project: project, env: env}
}

// cli runs `mailgate mailbox args…` as agent in the project directory,
// in-process through main's dispatch and exit status (a process start costs
// ~30 ms of CPU, and the table tests here make dozens): the environment the
// command sees is the world's alone, as a subprocess's would be. cliBinary
// runs it as the binary: TestMailboxCLIEquivalence's piped send and
// TestMailboxCLIExitCodes' binary rows are that proof.
func (w *mbWorld) cli(agent, stdin string, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	vars := map[string]string{"AGENT_NAME": agent}
	for _, kv := range w.env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var out, errb bytes.Buffer
	env := &environment{args: append([]string{"mailbox"}, args...), getenv: func(k string) string { return vars[k] },
		stdout: &out, stderr: &errb, dir: w.project}
	if stdin != "" {
		env.stdin = strings.NewReader(stdin)
	}
	code = exitCode(run(context.Background(), env), env.stderr)
	return out.String(), errb.String(), code
}

// cliBinary is cli through the built binary, its stdin a pipe when stdin
// is not empty.
func (w *mbWorld) cliBinary(agent, stdin string, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	cmd := exec.Command(builtBinary(w.t), append([]string{"mailbox"}, args...)...)
	cmd.Dir = w.project
	cmd.Env = append(slices.Clone(w.env), "AGENT_NAME="+agent)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		w.t.Fatalf("mailgate mailbox %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// session starts `mailgate serve` (mailbox tools) as agent, in the project
// directory, in-process (serveHereIn): the environment and working
// directory the server sees are the world's alone, as a subprocess's would
// be. The mailbox set's servers on the binary: TestMailboxSuccessCriteria,
// TestMailboxServerExitsWhenTmuxSessionEnds.
func (w *mbWorld) session(agent string) *mcp.ClientSession {
	w.t.Helper()
	return serveHereIn(w.t, w.project, append(slices.Clone(w.env), "AGENT_NAME="+agent), &testWriter{t: w.t}, "serve")
}

// mbStep is one operation of a scenario: agent does op with args.
type mbStep struct {
	agent, op string
	args      []string
}

// viaMCP runs a step through the mailbox tools and returns its answer:
// the tool's text, or "error: " and the text for a tool error.
func viaMCP(t *testing.T, sessions map[string]*mcp.ClientSession, s mbStep) string {
	t.Helper()
	var name string
	args := map[string]any{}
	switch s.op {
	case "send":
		name, args["recipient"], args["message"] = "send", s.args[0], s.args[1]
	case "status":
		name, args["status"] = "status", s.args[0]
	case "receive":
		name = "receive"
	case "recipients":
		name = "list-recipients"
	}
	res, err := sessions[s.agent].CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%v: %v", s, err)
	}
	if res.IsError {
		return "error: " + resultTextOf(res)
	}
	return resultTextOf(res)
}

// viaCLI runs a step through `mailgate mailbox` and writes its output in
// the tool's answer form, so the two can be compared: receive's
// "From/ID/blank/message" as {from, id, message}, recipients' lines as
// {recipients: [{name, is_current}]}, a silent status as {status: "ok"},
// and a refusal (any exit status but 0) as "error: " and stderr's first line.
func viaCLI(t *testing.T, w *mbWorld, s mbStep) string {
	t.Helper()
	args := append([]string{s.op}, s.args...)
	out, errOut, code := w.cli(s.agent, "", args...)
	if code != 0 {
		line, _, _ := strings.Cut(errOut, "\n")
		return "error: " + strings.TrimPrefix(line, "error: ")
	}
	switch s.op {
	case "send":
		return strings.TrimSuffix(out, "\n")
	case "status":
		if out != "" {
			t.Fatalf("status printed %q", out)
		}
		return `{"status":"ok"}`
	case "receive":
		if out == "No unread messages\n" {
			return "No unread messages"
		}
		head, msg, ok := strings.Cut(out, "\n\n")
		from, id, ok2 := strings.Cut(head, "\n")
		if !ok || !ok2 || !strings.HasPrefix(from, "From: ") || !strings.HasPrefix(id, "ID: ") {
			t.Fatalf("receive printed %q", out)
		}
		b, _ := json.Marshal(map[string]string{"from": strings.TrimPrefix(from, "From: "), "id": strings.TrimPrefix(id, "ID: "), "message": msg})
		return string(b)
	case "recipients":
		type rec struct {
			Name      string `json:"name"`
			IsCurrent bool   `json:"is_current"`
		}
		rs := []rec{}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			name, you := strings.CutSuffix(l, " [you]")
			rs = append(rs, rec{name, you})
		}
		b, _ := json.Marshal(map[string]any{"recipients": rs})
		return string(b)
	}
	t.Fatalf("unknown op %s", s.op)
	return ""
}

// TestMailboxCLIEquivalence: the same scenario driven through the MCP
// mailbox tools and through `mailgate mailbox …` (each on a fresh store)
// gives the same answers, step by step; and on one store, what one
// interface sends the other receives with the same sender, id and content
// (the spec's SC-002, SC-003, US2-1, US3-3).
func TestMailboxCLIEquivalence(t *testing.T) {
	parallel(t)
	scenario := []mbStep{
		{"bob", "status", []string{"ready"}},
		{"alice", "recipients", nil},
		{"alice", "send", []string{"bob", "hello bob"}},
		{"alice", "send", []string{"bob", "two\nlines"}},
		{"alice", "send", []string{"zed", "anyone?"}},
		{"alice", "send", []string{"alice", "me?"}},
		{"bob", "receive", nil},
		{"bob", "receive", nil},
		{"bob", "receive", nil},
		{"bob", "status", []string{"busy"}},
		{"bob", "send", []string{"alice", "done"}},
		{"alice", "receive", nil},
		{"alice", "status", []string{"work"}},
	}
	want := []string{
		`{"status":"ok"}`,
		`{"recipients":[{"name":"alice","is_current":true},{"name":"bob","is_current":false}]}`,
		"Message #1 sent",
		"Message #2 sent",
		"error: recipient not found",
		"error: recipient not found",
		`{"from":"alice","id":"1","message":"hello bob"}`,
		`{"from":"alice","id":"2","message":"two\nlines"}`,
		"No unread messages",
		"error: Invalid status: busy. Valid: ready, work, offline",
		"Message #3 sent",
		`{"from":"bob","id":"3","message":"done"}`,
		`{"status":"ok"}`,
	}

	mw := newMBWorld(t)
	sessions := map[string]*mcp.ClientSession{"alice": mw.session("alice"), "bob": mw.session("bob")}
	cw := newMBWorld(t)
	for i, s := range scenario {
		gotMCP, gotCLI := viaMCP(t, sessions, s), viaCLI(t, cw, s)
		if gotMCP != want[i] || gotCLI != want[i] {
			t.Errorf("step %d %v:\n MCP %s\n CLI %s\nwant %s", i, s, gotMCP, gotCLI, want[i])
		}
	}

	// One store: MCP sends, the CLI receives, and the other way round.
	w := newMBWorld(t)
	alice := w.session("alice")
	w.cli("bob", "", "status", "ready")
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "send", Arguments: map[string]any{"recipient": "bob", "message": "via MCP\n  indented"}})
	if err != nil || res.IsError || resultTextOf(res) != "Message #1 sent" {
		t.Fatalf("MCP send: %v %s", err, resultTextOf(res))
	}
	if out, _, code := w.cli("bob", "", "receive"); code != 0 || out != "From: alice\nID: 1\n\nvia MCP\n  indented" {
		t.Fatalf("CLI receive of MCP mail: %d %q", code, out)
	}
	if out, _, code := w.cliBinary("bob", "via the CLI, piped\n", "send", "alice"); code != 0 || out != "Message #2 sent\n" {
		t.Fatalf("CLI send: %d %q", code, out)
	}
	res, err = alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "receive", Arguments: map[string]any{}})
	if err != nil || resultTextOf(res) != `{"from":"bob","id":"2","message":"via the CLI, piped"}` {
		t.Fatalf("MCP receive of CLI mail: %v %s", err, resultTextOf(res))
	}
}

// TestMailboxCLIExitCodes: the original CLI's texts and exit statuses.
func TestMailboxCLIExitCodes(t *testing.T) {
	parallel(t)
	w := newMBWorld(t)
	w.cli("bob", "", "status", "ready")
	cases := []struct {
		agent  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"alice", []string{"send"}, 1, "", "error: missing required arguments: recipient message\n"},
		{"alice", []string{"send", "bob"}, 1, "", "error: no message provided\nusage: mailgate mailbox send <recipient> <message>\n"},
		{"alice", []string{"send", "-r", "bob", "-m", "flags"}, 0, "Message #1 sent\n", ""},
		{"alice", []string{"send", "--recipient", "nobody", "--message", "x"}, 1, "", "error: recipient not found\n"},
		{"alice", []string{"status"}, 1, "", "error: missing required argument: status\nusage: mailgate mailbox status <ready|work|offline>\n"},
		{"alice", []string{"status", "Ready"}, 1, "", "Invalid status: Ready. Valid: ready, work, offline\n"},
		{"", []string{"recipients"}, 2, "", "error: no agent identity: run inside tmux (the window name is the identity) or set AGENT_NAME\n"},
		{"", []string{"send", "bob", "x"}, 2, "", "error: no agent identity: run inside tmux (the window name is the identity) or set AGENT_NAME\n"},
		{"", []string{"status", "ready"}, 0, "", ""}, // a no-op without identity, as outside tmux
		// ... but a status that is none of the three is refused there too:
		// a hook with a typo must not pass silently (issue 33).
		{"", []string{"status", "bogus"}, 1, "", "Invalid status: bogus. Valid: ready, work, offline\n"},
		{"", []string{"receive", "--hook"}, 0, "", ""},
		{"bob", []string{"receive", "--hook"}, 2, "", "You got new mail\nFrom: alice\nID: 1\n\nflags"},
		{"bob", []string{"receive", "--hook"}, 0, "", ""},
		{"bob", []string{"receive"}, 0, "No unread messages\n", ""},
	}
	for i, c := range cases {
		// The binary answers the rows that change nothing (each exit
		// status once), in-process the same rows and the rest.
		clis := []func(string, string, ...string) (string, string, int){w.cli}
		if i == 4 || i == 6 || i == 8 {
			clis = append(clis, w.cliBinary)
		}
		for _, cli := range clis {
			out, errOut, code := cli(c.agent, "", c.args...)
			if code != c.code || out != c.stdout || errOut != c.stderr {
				t.Errorf("%s %v: exit %d stdout %q stderr %q\nwant exit %d stdout %q stderr %q", c.agent, c.args, code, out, errOut, c.code, c.stdout, c.stderr)
			}
		}
	}
}

// TestMailboxImport: a recorded .agentmail/ directory (the spec's formats)
// imports once (mailboxes in name order, each in file order: alice's one
// message is #1, bob's three #2–#4); its unread mail is received oldest
// first, read mail is not,
// statuses come along; a second import adds nothing.
func TestMailboxImport(t *testing.T) {
	parallel(t)
	w := newMBWorld(t)
	if err := os.CopyFS(w.project, os.DirFS(filepath.Join("testdata", "agentmail-repo"))); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := w.cli("", "", "import", w.project)
	if code != 0 || !strings.HasPrefix(out, "Imported 4 messages (3 unread) and 2 statuses from "+filepath.Join(w.project, ".agentmail")+" into project "+w.project) {
		t.Fatalf("import: %d %q %q", code, out, errOut)
	}
	for _, want := range []string{"From: alice\nID: 3\n\nSecond thought: also check the migration\nline two", "From: carol\nID: 4\n\nlunch?", "No unread messages\n"} {
		if out, errOut, code := w.cli("bob", "", "receive"); code != 0 || out != want {
			t.Fatalf("bob receive: %d %q %q, want %q", code, out, errOut, want)
		}
	}
	if out, _, _ := w.cli("alice", "", "receive"); out != "From: bob\nID: 1\n\nOn it" {
		t.Fatalf("alice receive: %q", out)
	}
	// Again: nothing new, nothing unread again.
	out, _, code = w.cli("", "", "import", filepath.Join(w.project, ".agentmail"))
	if code != 0 || !strings.Contains(out, "Imported 0 messages (0 unread) and 0 statuses") || !strings.Contains(out, "4 messages were imported before and skipped") {
		t.Fatalf("second import: %d %q", code, out)
	}
	if out, _, _ := w.cli("bob", "", "receive"); out != "No unread messages\n" {
		t.Fatalf("after a second import bob has %q", out)
	}
	// The imported agents are recipients.
	out, _, _ = w.cli("carol", "", "recipients")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"alice", "bob", "carol [you]"}) {
		t.Fatalf("recipients: %q", out)
	}
	// A broken file is refused with its file and line, importing nothing.
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, ".agentmail", "mailboxes"), 0o755)
	os.WriteFile(filepath.Join(bad, ".agentmail", "mailboxes", "x.jsonl"), []byte(`{"id":"a","from":"y","to":"x","message":"ok"}`+"\n{broken\n"), 0o644)
	if _, errOut, code := w.cli("", "", "import", bad); code != 1 || !strings.Contains(errOut, "x.jsonl:2: not a mailbox message") {
		t.Fatalf("broken import: %d %q", code, errOut)
	}
}
