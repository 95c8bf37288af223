package mcpserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// Tests named after the attacks of issue 18 on the agent-mail tool sets,
// each through the real MCP protocol.

// TestChannelNameHeaderInjection: a channel name, or a channels agent name,
// holding CR/LF (a Reply-To and a forged body for the Gmail copy) is
// refused with a reason, as is any name a register_agent name could not be.
func TestChannelNameHeaderInjection(t *testing.T) {
	t.Parallel()
	h, _ := newChannels(t, nil, SetOptions{})
	id := chRegister(t, h, "coder-1", "coder")
	hostile := "x\r\nReply-To: attacker@evil.example\r\n\r\nForged body"
	h.checkRefusals([]refusal{
		{"send_message", map[string]any{"agent_id": id, "channel": hostile, "subject": "s", "body": "b"}, "invalid channel"},
		{"send_message", map[string]any{"agent_id": id, "channel": "a\u202eb", "subject": "s", "body": "b"}, "invalid channel"},
		{"send_message", map[string]any{"agent_id": id, "channel": strings.Repeat("c", 65), "subject": "s", "body": "b"}, "the limit is 64"},
		{"read_messages", map[string]any{"agent_id": id, "channel": hostile}, "invalid channel"},
		{"register", map[string]any{"name": hostile, "role": "coder"}, "invalid name"},
		{"register", map[string]any{"name": "Eve\u200b", "role": "coder"}, "invalid name"},
		{"register", map[string]any{"name": strings.Repeat("n", 65), "role": "coder"}, "the limit is 64"},
		{"register", map[string]any{"name": "coder-2", "role": "x\r\ny"}, "invalid role"},
	})
	// A valid channel still works.
	h.call("send_message", map[string]any{"agent_id": id, "channel": "backend-team", "subject": "s", "body": "b"}, nil)
}

// TestProjectKeyWithoutBounds: project keys with NUL bytes, bidirectional
// controls or 5,000 characters are refused, saying the limit and the fix.
func TestProjectKeyWithoutBounds(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	cases := []struct{ key, want string }{
		{"/data/pro\x00jects/app", "U+0000"},
		{"/data/projects/\u202eppa", "U+202E"},
		{"/data/projects/a\u2028b", "U+2028"},
		{"/" + strings.Repeat("a", 5000), "the limit is 1024"},
	}
	for _, c := range cases {
		got := h.callErr("ensure_project", map[string]any{"human_key": c.key})
		if !strings.Contains(got, c.want) || !strings.Contains(got, "absolute path") {
			t.Errorf("ensure_project(%.40q): error %q, want it to name %q and say what to pass", c.key, got, c.want)
		}
		got = h.callErr("register_agent", map[string]any{"project_key": c.key, "name": "BlueLake"})
		if !strings.Contains(got, c.want) {
			t.Errorf("register_agent(%.40q): error %q, want it to name %q", c.key, got, c.want)
		}
	}
	h.call("ensure_project", map[string]any{"human_key": "/" + strings.Repeat("a", 1000)}, nil)
}

// TestReservationPatternHiddenCharacters: reservation patterns and claimed
// paths with control or invisible characters, or too many of them, are
// refused.
func TestReservationPatternHiddenCharacters(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	const project = "/data/projects/app"
	h.call("ensure_project", map[string]any{"human_key": project}, nil)
	h.call("register_agent", map[string]any{"project_key": project, "name": "BlueLake"}, nil)
	for _, p := range []string{"src/\x00main.go", "src/\u202eog.niam", "src/a\nb"} {
		got := h.callErr("file_reservation_paths", map[string]any{"project_key": project, "agent_name": "BlueLake", "paths": []string{p}})
		if !strings.Contains(got, "cannot be reserved") {
			t.Errorf("file_reservation_paths(%q): error %q", p, got)
		}
	}

	c, _ := newChannels(t, nil, SetOptions{})
	id := chRegister(t, c, "coder-1", "coder")
	many := make([]string, 1001)
	for i := range many {
		many[i] = "f"
	}
	for _, files := range [][]string{many, {"a\x00b"}, {strings.Repeat("d/", 600)}} {
		got := c.callErr("claim_files", map[string]any{"agent_id": id, "files": files})
		if !strings.Contains(got, "limit") && !strings.Contains(got, "not a usable path") {
			t.Errorf("claim_files(%d files, %.20q): error %q", len(files), files[0], got)
		}
	}
}

// TestStalenessReadsForeignTrees: naming a directory that is not a project
// tree (here a folder with a secret file and no repository; in an attack
// /etc or another user's home) as a project does not let an agent learn
// when files there changed; the project's own repository is still read.
func TestStalenessReadsForeignTrees(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	for _, repo := range []bool{false, true} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if repo {
			os.Mkdir(filepath.Join(dir, ".git"), 0o700)
		}
		var ep struct {
			Slug string `json:"slug"`
		}
		h.call("ensure_project", map[string]any{"human_key": dir}, &ep)
		h.call("register_agent", map[string]any{"project_key": dir, "name": "BlueLake"}, nil)
		h.call("file_reservation_paths", map[string]any{"project_key": dir, "agent_name": "BlueLake", "paths": []string{"secret.txt"}}, nil)
		var rs []struct {
			LastFS       *string  `json:"last_filesystem_activity_ts"`
			StaleReasons []string `json:"stale_reasons"`
		}
		h.read("resource://file_reservations/"+ep.Slug, &rs)
		if len(rs) != 1 {
			t.Fatalf("%d reservations", len(rs))
		}
		switch {
		case !repo && (rs[0].LastFS != nil || !slices.Contains(rs[0].StaleReasons, "workspace_unavailable")):
			t.Errorf("a folder that is no project tree was read: last_filesystem_activity_ts %v, reasons %v", *rs[0].LastFS, rs[0].StaleReasons)
		case repo && rs[0].LastFS == nil:
			t.Errorf("the project's own repository was not read: reasons %v", rs[0].StaleReasons)
		}
	}
}

// TestMailboxNameHeaderInjection: a mailbox identity (AGENT_NAME, a tmux
// window name) holding a line break does not become an agent whose name
// reaches the Gmail copy's headers and the archive.
func TestMailboxNameHeaderInjection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svc := compatService(t, amtest.DSN(t), nil)
	h := connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir,
		AgentName: "win\r\nReply-To: attacker@evil.example", Getenv: func(string) string { return "" }})
	if _, err := svc.EnsureProject(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RegisterAgent(t.Context(), agentmail.RegisterParams{ProjectKey: dir, Name: "BlueLake"}); err != nil {
		t.Fatal(err)
	}
	got := h.callErr("send", map[string]any{"recipient": "BlueLake", "message": "hi"})
	if !strings.Contains(got, "cannot be used") {
		t.Fatalf("send as a name with CRLF: %q", got)
	}
}
