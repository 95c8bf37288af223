package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultHome turns a world into one using the default home: HOME is a
// fresh folder whose .mailgate is the world's home, and MAILGATE_HOME is
// not set. It returns HOME.
func (w *world) defaultHome() string {
	w.t.Helper()
	userHome := w.t.TempDir()
	if err := os.Symlink(w.home, filepath.Join(userHome, ".mailgate")); err != nil {
		w.t.Fatal(err)
	}
	env := []string{"HOME=" + userHome}
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "MAILGATE_HOME=") {
			env = append(env, kv)
		}
	}
	w.env = env
	return userHome
}

// runIn runs the built binary in dir with exactly env and returns its
// combined output and exit status.
func runIn(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// runHere is runIn in-process, through main's dispatch and exit status: the
// same code without a process start (~30 ms of CPU each). Its output is
// stdout, then stderr.
func runHere(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	r := newSetupRun(env, nil, args...)
	r.env.dir = dir
	code := r.run(t)
	return r.stdout.String() + r.stderr.String(), code
}

// TestOneHomeAndTheTruthAboutTheMode: with no MAILGATE_HOME, a server
// started in one folder (its client's environment sets DEV_MODE=false) and
// `mailgate approvals` run in another folder (DEV_MODE unset: the terminal
// would say true) see the same vault; approvals says the running server
// WILL send, and that the terminal's settings differ; approve says it too;
// the email is then really sent; once the server stopped cleanly, approvals
// says no server is running instead of guessing.
func TestOneHomeAndTheTruthAboutTheMode(t *testing.T) {
	parallel(t)
	w := newWorld(t, false) // the server's environment: DEV_MODE=false
	userHome := w.defaultHome()
	serverDir, terminalDir := t.TempDir(), t.TempDir()

	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir = serverDir
	cmd.Env = w.env
	cmd.Stderr = &testWriter{t: t}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	send := map[string]any{"to": "bob@example.com", "subject": "Quarterly numbers", "body": "Hi Bob,\n\nAttached below.\n"}
	if text, isErr := call(t, cs, "send_email", send); !isErr || !strings.Contains(text, "Pending_Approval") {
		t.Fatalf("first send: %v %s", isErr, text)
	}

	terminal := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + userHome} // no MAILGATE_HOME, no DEV_MODE
	for _, kv := range w.env {
		if strings.HasPrefix(kv, "MAILGATE_DB=") { // a PostgreSQL run: the store is not in the home
			terminal = append(terminal, kv)
		}
	}
	out, code := runIn(t, terminalDir, terminal, "approvals")
	t.Logf("approvals:\n%s", out)
	pid := strconv.Itoa(cmd.Process.Pid)
	for _, want := range []string{
		"Pending_Approval/ (1)",
		"1 server running (pid " + pid + ",",
		"DEV_MODE=false — an approved email WILL be sent",
		"this terminal's settings differ (DEV_MODE=true here, DEV_MODE=false in a running server)",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("approvals (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "send nothing") || strings.Contains(out, "nothing is sent") {
		t.Fatalf("approvals says nothing is sent while the server sends:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(terminalDir, "vault")); err == nil {
		t.Fatal("approvals created a vault in its working directory")
	}

	// The approval and the listing after the stop in-process (runHere):
	// the run above showed the binary in its own folder.
	id := strings.TrimSuffix(w.files("Pending_Approval")[0], ".md")
	out, code = runHere(t, terminalDir, terminal, "approvals", "approve", "--yes", id)
	if code != 0 || !strings.Contains(out, "DEV_MODE=false — an approved email WILL be sent") || strings.Contains(out, "DEV_MODE is on") {
		t.Fatalf("approve (exit %d):\n%s", code, out)
	}
	if text, isErr := call(t, cs, "send_email", send); isErr || len(w.gm.Sent()) != 1 {
		t.Fatalf("approved send: %v %s (Gmail has %d sent)", isErr, text, len(w.gm.Sent()))
	}

	cs.Close() // stdin closes; the server stops cleanly
	out, code = runHere(t, terminalDir, terminal, "approvals")
	if code != 0 || !strings.Contains(out, "No mailgate server with the email tools is running on this store (") ||
		!strings.Contains(out, "would send nothing (DEV_MODE=true)") || strings.Contains(out, "server running") {
		t.Fatalf("approvals after the server stopped (exit %d):\n%s", code, out)
	}
}

// TestTwoAgentsInTwoFoldersMeet: two stdio servers started by two agents'
// clients in two different folders, with no MAILGATE_HOME, share one store:
// a message sent by one is in the other's inbox.
func TestTwoAgentsInTwoFoldersMeet(t *testing.T) {
	parallel(t)
	userHome := t.TempDir()
	project := "/work/project"
	// In-process (serveHereIn), each in its folder with its environment:
	// the subject is where the two servers find their home, not the
	// processes (TestAgentMailEightProcesses has processes share a store).
	connect := func(dir string) *mcp.ClientSession {
		return serveHereIn(t, dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + userHome, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"},
			&testWriter{t: t}, "serve")
	}
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "frontend"), 0o755)
	os.MkdirAll(filepath.Join(repo, "backend"), 0o755)
	a, b := connect(filepath.Join(repo, "frontend")), connect(filepath.Join(repo, "backend"))
	mustCall := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		text, isErr := call(t, cs, tool, args)
		if isErr {
			t.Fatalf("%s: %s", tool, text)
		}
		return text
	}
	mustCall(a, "ensure_project", map[string]any{"human_key": project})
	mustCall(a, "register_agent", map[string]any{"project_key": project, "name": "BlueLake", "program": "test", "model": "x"})
	mustCall(b, "register_agent", map[string]any{"project_key": project, "name": "GreenCastle", "program": "test", "model": "x"})
	mustCall(a, "send_message", map[string]any{"project_key": project, "sender_name": "BlueLake", "to": []string{"GreenCastle"},
		"subject": "API ready", "body_md": "The endpoint is merged."})
	res, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_inbox", Arguments: map[string]any{"project_key": project, "agent_name": "GreenCastle"}})
	if err != nil || res.IsError {
		t.Fatalf("fetch_inbox: %v %v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(raw), "API ready") {
		t.Fatalf("GreenCastle's inbox lacks the message: %s", raw)
	}
	if _, err := os.Stat(filepath.Join(userHome, ".mailgate", "state.db")); err != nil {
		t.Fatalf("the store is not in the default home: %v", err)
	}
	for _, d := range []string{"frontend", "backend"} {
		if entries, _ := os.ReadDir(filepath.Join(repo, d)); len(entries) != 0 {
			t.Fatalf("a server wrote into its working directory %s: %v", d, entries)
		}
	}
}

// TestLegacyHomeIsPointedOut: run in a folder that was a home when the
// default was the working directory, a command says so in one line, and
// `mailgate home --migrate-from` moves it into the default home (keeping a
// clone's README files); without HOME or MAILGATE_HOME it fails fast. The
// first pointing-out and the failure through the binary, the rest
// in-process (runHere).
func TestLegacyHomeIsPointedOut(t *testing.T) {
	parallel(t)
	userHome, old := t.TempDir(), t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(old, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("vault/README.md", "tracked")
	write("vault/Done/EMAIL_SEND_1.md", "done")
	write("auth/token.json", "{}")
	write("audit/2026-11-01.jsonl", "{}\n")
	write(".env", "MAILGATE_HOME="+old+"\nSEND_LIMIT_PER_HOUR=4\n")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + userHome}
	// The old store: a server ran there.
	if out, code := runHere(t, old, append(env, "MAILGATE_HOME="+old, "MAILGATE_TOOLS=agentmail"), "doctor"); code != 0 {
		t.Fatalf("doctor in the old home: %d\n%s", code, out)
	}
	os.MkdirAll(filepath.Join(old, ".mailgate"), 0o700)
	if err := os.Rename(filepath.Join(old, "state.db"), filepath.Join(old, ".mailgate", "state.db")); err != nil {
		t.Fatal(err)
	}

	out, _ := runIn(t, old, env, "approvals")
	re := regexp.MustCompile(`(?m)^mailgate: .* holds an older mailgate home .*mailgate home --migrate-from .*$`)
	if n := len(re.FindAllString(out, -1)); n != 1 || !strings.Contains(out, filepath.Join(userHome, ".mailgate")) {
		t.Fatalf("want one line about the older home:\n%s", out)
	}
	out, code := runHere(t, "/", env, "home", "--migrate-from", old)
	if code != 0 {
		t.Fatalf("migrate: %d\n%s", code, out)
	}
	home := filepath.Join(userHome, ".mailgate")
	for _, p := range []string{"vault/Done/EMAIL_SEND_1.md", "auth/token.json", "audit/2026-11-01.jsonl", "state.db"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("%s not moved: %v\n%s", p, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(old, "vault", "README.md")); err != nil {
		t.Errorf("the clone's README went: %v", err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("home: %v %v", fi, err)
	}
	if out, _ := runHere(t, old, env, "approvals"); strings.Contains(out, "older mailgate home") || !strings.Contains(out, "Done/ (1)") {
		t.Errorf("after the move:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".env")); string(b) != "SEND_LIMIT_PER_HOUR=4\n" {
		t.Errorf("moved settings file = %q", b)
	}
	// A second move finds nothing to move, and says so.
	if out, code := runHere(t, "/", env, "home", "--migrate-from", old); code == 0 || !strings.Contains(out, "holds no mailgate home files") {
		t.Errorf("second move: %d\n%s", code, out)
	}
	// The user's home folder holds the home: never a source.
	if out, code := runHere(t, "/", env, "home", "--migrate-from", userHome); code == 0 || !strings.Contains(out, "inside one another") {
		t.Errorf("migrate from the user's home folder: %d\n%s", code, out)
	}
	// A project's .env with other variables stays; mailgate's files move.
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, "vault", "Rejected"), 0o700)
	os.WriteFile(filepath.Join(proj, "vault", "Rejected", "EMAIL_SEND_2.md"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(proj, ".env"), []byte("DATABASE_URL=x\nDEV_MODE=false\n"), 0o600)
	if out, code := runHere(t, "/", env, "home", "--migrate-from", proj); code != 0 || !strings.Contains(out, "left "+filepath.Join(proj, ".env")+" in place") {
		t.Errorf("migrate a project: %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(proj, ".env")); err != nil {
		t.Errorf("the project's .env moved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "vault", "Rejected", "EMAIL_SEND_2.md")); err != nil {
		t.Errorf("the project's request did not move: %v", err)
	}
	if out, code := runIn(t, "/", []string{"PATH=" + os.Getenv("PATH")}, "approvals"); code != 1 || !strings.Contains(out, "MAILGATE_HOME") || strings.Count(out, "\n") != 1 {
		t.Errorf("without HOME: exit %d\n%s", code, out)
	}
}

// TestConfigSet: `mailgate config set` writes the home's settings file
// (0600, the home 0700), refuses a value serve would refuse, and what it
// wrote is what the server and approvals then use. The first refusal
// through the binary, the rest in-process (runHere).
func TestConfigSet(t *testing.T) {
	parallel(t)
	userHome := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + userHome}
	if out, code := runIn(t, "/", env, "config", "set", "DEV_MODE", "maybe"); code != 1 || !strings.Contains(out, "DEV_MODE") {
		t.Fatalf("bad value: %d\n%s", code, out)
	}
	if out, code := runHere(t, "/", env, "config", "set", "MAILGATE_HOME", "/x"); code != 1 {
		t.Fatalf("MAILGATE_HOME: %d\n%s", code, out)
	}
	if out, code := runHere(t, "/", env, "config", "set", "DEV_MODE", "false"); code != 0 || !strings.Contains(out, "Set DEV_MODE=false in "+filepath.Join(userHome, ".mailgate", ".env")) {
		t.Fatalf("set: %d\n%s", code, out)
	}
	fi, err := os.Stat(filepath.Join(userHome, ".mailgate", ".env"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings file: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(userHome, ".mailgate")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home: %v %v", fi, err)
	}
	out, code := runHere(t, "/", env, "config")
	if code != 0 || !strings.Contains(out, "DEV_MODE=false") || !strings.Contains(out, "in effect DEV_MODE=false") {
		t.Fatalf("config: %d\n%s", code, out)
	}
	out, _ = runHere(t, "/", env, "approvals")
	if !strings.Contains(out, "would SEND an approved email for real (DEV_MODE=false") {
		t.Fatalf("approvals:\n%s", out)
	}
	if out, code := runHere(t, "/", env, "config", "unset", "DEV_MODE"); code != 0 || !strings.Contains(out, "Removed DEV_MODE") {
		t.Fatalf("unset: %d\n%s", code, out)
	}
	if out, _ := runHere(t, "/", env, "approvals"); !strings.Contains(out, "would send nothing (DEV_MODE=true)") {
		t.Fatalf("approvals after unset:\n%s", out)
	}
}

// TestDoctorVaultExposure: doctor warns when the vault sits in a git work
// tree (a home inside a clone, as the old default made it) or in a folder
// Claude Desktop's filesystem server exposes; the default home is clean.
func TestDoctorVaultExposure(t *testing.T) {
	parallel(t)
	userHome := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + userHome, "XDG_CONFIG_HOME=" + filepath.Join(userHome, ".config"), "MAILGATE_TOOLS=email"}
	line := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "vault exposure") {
				return l
			}
		}
		return ""
	}
	out, _ := runIn(t, "/", env, "doctor")
	if l := line(out); !strings.HasPrefix(strings.TrimSpace(l), "ok") {
		t.Fatalf("default home: %q\n%s", l, out)
	}
	// The other two homes in-process (runHere): the run above showed the
	// binary's doctor.
	clone := filepath.Join(userHome, "src", "mailgate")
	os.MkdirAll(filepath.Join(clone, ".git"), 0o700)
	out, _ = runHere(t, "/", append(env, "MAILGATE_HOME="+clone), "doctor")
	if l := line(out); !strings.HasPrefix(strings.TrimSpace(l), "warn") || !strings.Contains(l, "git work tree "+clone) {
		t.Fatalf("home in a clone: %q\n%s", l, out)
	}
	cfg := filepath.Join(userHome, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte(`{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "`+userHome+`"]}}}`), 0o600)
	out, _ = runHere(t, "/", env, "doctor")
	if l := line(out); !strings.HasPrefix(strings.TrimSpace(l), "warn") || !strings.Contains(l, `filesystem server "filesystem" `+userHome) {
		t.Fatalf("filesystem server: %q\n%s", l, out)
	}
}
