package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
)

// filesWorld is a mailgate home holding a token, credentials and a pending
// request, beside a project that is a work tree of its own.
type filesWorld struct{ base, home, proj, db string }

func newFilesWorld(t *testing.T) filesWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := filesWorld{base: base, home: filepath.Join(base, "mailgate"), proj: filepath.Join(base, "proj"), db: filepath.Join(base, "state.db")}
	for path, body := range map[string]string{
		filepath.Join(w.home, "auth", "token.json"):             `{"refresh_token":"SECRET-REFRESH"}`,
		filepath.Join(w.home, "credentials.json"):               `{"installed":{"client_secret":"SECRET-CLIENT"}}`,
		filepath.Join(w.home, "approvals", "pending", "req.md"): "SECRET-PENDING",
		filepath.Join(w.proj, ".git", "HEAD"):                   "ref: refs/heads/main\n",
		filepath.Join(w.proj, "plan.md"):                        "the plan",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// seedProjects writes projects into the store the way a mailgate made
// before ensure_project refused such keys would have.
func (w filesWorld) seedProjects(t *testing.T, keys ...string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := amstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range keys {
		if err := st.Write(ctx, func(tx agentmail.Tx) error {
			return tx.InsertProject(ctx, &agentmail.Project{Slug: fmt.Sprintf("old-%d", i), HumanKey: key, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgentMailFilesThroughBinary is issue 32's first reproduction against
// the built binary: the token, the OAuth client, a pending request and
// /etc/passwd were read through ensure_project + send_message + the
// attachment resource. ensure_project refuses /, the home and the folder
// holding it; a project left in the store by an older mailgate reads no
// file; inside a real project, .., an absolute path and symbolic links out
// are refused.
func TestAgentMailFilesThroughBinary(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	w := newFilesWorld(t)
	w.seedProjects(t, "/", w.home, w.base)
	if err := os.Symlink(filepath.Join(w.home, "auth"), filepath.Join(w.proj, "auth")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.base, "MAILGATE_HOME=" + w.home, "MAILGATE_DB=" + w.db, "MAILGATE_TOOLS=agentmail"}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	for key, want := range map[string]string{
		"/":                           "it is the root folder",
		w.home:                        "it is mailgate's home",
		w.base:                        "it holds mailgate's home",
		filepath.Join(w.home, "auth"): "it is inside mailgate's home",
	} {
		if text, isErr := call("ensure_project", map[string]any{"human_key": key}); !isErr || !strings.Contains(text, want) {
			t.Errorf("ensure_project(%s): error=%v %q, want %q", key, isErr, text, want)
		}
	}
	if text, isErr := call("ensure_project", map[string]any{"human_key": w.proj}); isErr {
		t.Fatalf("ensure_project(project): %s", text)
	}
	for _, key := range []string{"/", w.home, w.base, w.proj} {
		for _, a := range []string{"GreenDog", "BlueLake"} {
			if text, isErr := call("register_agent", map[string]any{"project_key": key, "name": a, "program": "test", "model": "x"}); isErr {
				t.Fatalf("register_agent in %s: %s", key, text)
			}
		}
	}
	for _, c := range []struct{ project, path string }{
		{"/", "/etc/passwd"},
		{"/", filepath.Join(w.home, "auth", "token.json")},
		{w.home, "auth/token.json"},
		{w.home, "credentials.json"},
		{w.home, "approvals/pending/req.md"},
		{w.base, "mailgate/auth/token.json"},
		{w.proj, "../mailgate/auth/token.json"},
		{w.proj, "auth/token.json"},
		{w.proj, "/etc/passwd"},
	} {
		text, isErr := call("send_message", map[string]any{"project_key": c.project, "sender_name": "GreenDog", "to": []string{"BlueLake"},
			"subject": "s", "body_md": "b", "attachment_paths": []string{c.path}})
		if !isErr {
			// Show what came back, as the reproduction did.
			res, _ := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: agentmail.AttachmentURI(c.project, 1, 1)})
			t.Errorf("%s in %s: attached (%s); resource: %+v", c.path, c.project, text, res)
		}
	}
	if text, isErr := call("send_message", map[string]any{"project_key": w.proj, "sender_name": "GreenDog", "to": []string{"BlueLake"},
		"subject": "s", "body_md": "b", "attachment_paths": []string{"plan.md"}}); isErr {
		t.Fatalf("the project's own file: %s", text)
	}
}

// TestDoctorWarnsTokenlessHTTPAndBadProjects (issue 32): doctor warns when
// serve --http would run without a token, and when the store holds a
// project whose folder is /, the home or a folder holding it; a clean
// configuration gets ok lines.
func TestDoctorWarnsTokenlessHTTPAndBadProjects(t *testing.T) {
	parallel(t)
	w := newFilesWorld(t)
	env := []string{"HOME=" + w.base, "MAILGATE_HOME=" + w.home, "MAILGATE_DB=" + w.db, "MAILGATE_TOOLS=agentmail"}

	r := newSetupRun(env, nil, "doctor")
	if code := r.run(t); code != 0 {
		t.Fatalf("clean: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	for name, want := range map[string]string{"http auth": "the first one generates it", "agent projects": "no project is /"} {
		if l, _, ok := doctorLine(r.stdout.String(), "ok", name); !ok || !strings.Contains(l, want) {
			t.Errorf("no ok line for %s with %q:\n%s", name, want, r.stdout)
		}
	}

	w.seedProjects(t, "/", w.home, w.base, w.proj)
	r = newSetupRun(append(env, "AGENT_MAIL_HTTP_AUTH=none"), nil, "doctor", "--strict")
	if code := r.run(t); code != 1 {
		t.Fatalf("--strict with warnings: exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	out := r.stdout.String()
	if l, fix, ok := doctorLine(out, "warn", "http auth"); !ok || !strings.Contains(l, "without a bearer token") || !strings.Contains(fix, "config unset AGENT_MAIL_HTTP_AUTH") {
		t.Errorf("no warning about the tokenless HTTP mode:\n%s", out)
	}
	l, fix, ok := doctorLine(out, "warn", "agent projects")
	if !ok || !strings.Contains(l, "3 agent-mail project(s)") || !strings.Contains(l, "/ (it is the root folder") ||
		!strings.Contains(l, w.home+" (it is mailgate's home") || !strings.Contains(l, w.base+" (it holds mailgate's home") ||
		strings.Contains(l, w.proj) || !strings.Contains(fix, "ensure_project") {
		t.Errorf("agent projects line:\n%s", out)
	}
}
