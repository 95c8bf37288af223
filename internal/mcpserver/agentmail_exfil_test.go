package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
)

// TestAgentMailNoFileExfiltration is issue 32's first reproduction through
// the protocol: an agent made /, the mailgate home or a folder holding it a
// project, then attached auth/token.json, credentials.json, a pending
// request and /etc/passwd and read them back through the attachment
// resource. ensure_project now refuses those keys; a store made before the
// rule that holds such a project still reads no file from it; inside a real
// project, a hard link or a symbolic link (leaf or parent) to the token, a
// ".." path and an absolute path are refused.
func TestAgentMailNoFileExfiltration(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, vault, proj := filepath.Join(base, "mailgate"), filepath.Join(base, "vault"), filepath.Join(base, "proj")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	token := filepath.Join(home, "auth", "token.json")
	write(token, `{"refresh_token":"SECRET-REFRESH"}`)
	write(filepath.Join(home, "credentials.json"), `{"client_secret":"SECRET-CLIENT"}`)
	write(filepath.Join(home, "approvals", "pending", "req-1.md"), "SECRET-PENDING")
	write(filepath.Join(vault, "note.md"), "SECRET-VAULT")
	write(filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(proj, "plan.md"), "the plan")
	for _, err := range []error{
		os.Link(token, filepath.Join(proj, "hard.json")),
		os.Symlink(token, filepath.Join(proj, "leaf.json")),
		os.Symlink(filepath.Join(home, "auth"), filepath.Join(proj, "auth")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	protected := []agentmail.ProtectedPath{{What: "mailgate's home", Path: home}, {What: "the vault", Path: vault}}
	h := newAMHarness(t, func(o *agentmail.Options) { o.Protected = protected })

	userHome, _ := os.UserHomeDir()
	for key, want := range map[string]string{
		userHome:                    "your home folder",
		"/":                         "it is the root folder",
		home:                        "it is mailgate's home",
		base:                        "it holds mailgate's home",
		filepath.Join(home, "auth"): "it is inside mailgate's home",
		vault:                       "it is the vault",
		filepath.Join(proj, "auth"): "it is inside mailgate's home",
		home + "/approvals/../":     "it is mailgate's home",
	} {
		if key == "" || key == "/" && userHome == "/" {
			continue
		}
		got := h.callErr("ensure_project", map[string]any{"human_key": key})
		if !strings.Contains(got, want) || !strings.Contains(got, "A project is the working directory of one code base") {
			t.Errorf("ensure_project(%s): %q, want %q", key, got, want)
		}
	}

	// A store made before the rule: the projects are there already.
	st, err := amstore.Open(h.ctx, h.db)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"/", home, base} {
		if err := st.Write(h.ctx, func(tx agentmail.Tx) error {
			return tx.InsertProject(h.ctx, &agentmail.Project{Slug: fmt.Sprintf("old-%d", i), HumanKey: key, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	h.call("ensure_project", map[string]any{"human_key": proj}, nil)
	for _, key := range []string{"/", home, base, proj} {
		for _, a := range []string{"GreenDog", "BlueLake"} {
			h.call("register_agent", map[string]any{"project_key": key, "name": a, "program": "claude-code", "model": "opus-4.5"}, nil)
		}
	}
	for _, c := range []struct{ project, path, want string }{
		{"/", "/etc/passwd", "it is the root folder"},
		{"/", "etc/passwd", "it is the root folder"},
		{home, "auth/token.json", "is not one: it is mailgate's home"},
		{home, "credentials.json", "it is mailgate's home"},
		{home, "approvals/pending/req-1.md", "it is mailgate's home"},
		{base, "mailgate/auth/token.json", "it holds mailgate's home"},
		{base, "vault/note.md", "it holds mailgate's home"},
		{proj, "hard.json", "it has 2 hard links"},
		{proj, "leaf.json", "is outside the project"},
		{proj, "auth/token.json", "is outside the project"},
		{proj, "../mailgate/auth/token.json", "is outside the project"},
		{proj, token, "is outside the project"},
		{proj, "/etc/passwd", "is outside the project"},
	} {
		got := h.callErr("send_message", map[string]any{"project_key": c.project, "sender_name": "GreenDog", "to": []string{"BlueLake"},
			"subject": "s", "body_md": "b", "attachment_paths": []string{c.path}})
		if !strings.Contains(got, c.want) {
			t.Errorf("%s in %s: %q, want %q", c.path, c.project, got, c.want)
		}
	}
	// Nothing was stored: no attachment resource exists to read back.
	for _, key := range []string{"/", home, base, proj} {
		if n := len(h.inbox(map[string]any{"project_key": key, "agent_name": "BlueLake"})); n != 0 {
			t.Errorf("%s: %d messages sent by refused calls", key, n)
		}
	}
	var n int
	if err := h.db.QueryRowContext(h.ctx, `SELECT COUNT(*) FROM am_attachments`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d attachments stored (%v)", n, err)
	}
	// The project's own file still goes, and comes back through the resource.
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": proj, "sender_name": "GreenDog", "to": []string{"BlueLake"},
		"subject": "s", "body_md": "b", "attachment_paths": []string{"plan.md"}}, &sent)
	res, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: agentmail.AttachmentURI(proj, sent.Deliveries[0].Payload.ID, 1)})
	if err != nil || len(res.Contents) != 1 || string(res.Contents[0].Blob) != "the plan" {
		t.Fatalf("the project's own file: %v %+v", err, res)
	}
}
