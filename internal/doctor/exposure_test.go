package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// The vault exposure check warns when the vault is inside a git work tree,
// inside (or around) a folder a client's filesystem server exposes, or
// inside a Claude Code project; a vault that is its own repository, and
// folders elsewhere, are fine.
func TestVaultExposure(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	userHome := filepath.Join(base, "home")
	writeFile := func(p, body string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	desktop := filepath.Join(base, "claude_desktop_config.json")
	code := filepath.Join(base, "claude.json")
	tests := []struct {
		name, vault string
		setup       func()
		warn        bool
		detail      string
	}{
		{name: "default home", vault: filepath.Join(userHome, ".mailgate", "vault"), detail: "not inside a git work tree"},
		{name: "vault is its own repository", vault: filepath.Join(base, "own", "vault"),
			setup: func() { os.MkdirAll(filepath.Join(base, "own", "vault", ".git"), 0o700) }, detail: "not inside a git work tree"},
		{name: "inside a clone", vault: filepath.Join(base, "clone", "vault"),
			setup: func() { os.MkdirAll(filepath.Join(base, "clone", ".git"), 0o700) }, warn: true, detail: "git work tree " + filepath.Join(base, "clone")},
		{name: "a worktree's .git file", vault: filepath.Join(base, "wt", "sub", "vault"),
			setup: func() { writeFile(filepath.Join(base, "wt", ".git"), "gitdir: /x") }, warn: true, detail: "git work tree " + filepath.Join(base, "wt")},
		{name: "filesystem server exposes the home folder", vault: filepath.Join(userHome, ".mailgate", "vault"),
			setup: func() {
				writeFile(desktop, `{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "~/Documents", "~"]},
					"mailgate": {"command": "/usr/local/bin/mailgate", "args": ["serve"]}}}`)
			}, warn: true, detail: `Claude Desktop (` + desktop + `) gives its filesystem server "files" ` + userHome},
		{name: "filesystem server given Approved/ itself", vault: filepath.Join(base, "v2"),
			setup: func() {
				writeFile(desktop, `{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["`+filepath.Join(base, "v2", "Approved")+`"]}}}`)
			}, warn: true, detail: filepath.Join(base, "v2", "Approved")},
		{name: "filesystem server elsewhere", vault: filepath.Join(userHome, ".mailgate", "vault"),
			setup: func() {
				writeFile(desktop, `{"mcpServers": {"files": {"command": "npx", "args": ["@modelcontextprotocol/server-filesystem", "~/Documents"]}}}`)
			}, detail: "no filesystem server or project of Claude Desktop holds it"},
		{name: "Claude Code project", vault: filepath.Join(base, "proj", "notes", "vault"),
			setup: func() {
				writeFile(code, `{"projects": {"`+filepath.Join(base, "proj")+`": {"mcpServers": {}}, "/": {}}}`)
			}, warn: true, detail: "Claude Code (" + code + ") works in the project folder " + filepath.Join(base, "proj")},
		{name: "unparsable client file is skipped", vault: filepath.Join(userHome, ".mailgate", "vault"),
			setup: func() { writeFile(desktop, `{"mcpServers": `) }, detail: "not inside a git work tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(desktop)
			os.Remove(code)
			if tt.setup != nil {
				tt.setup()
			}
			r := &run{cfg: &config.Config{VaultPath: tt.vault}, o: Options{UserHome: userHome, ClientConfigs: []ClientConfig{
				{Client: "Claude Desktop", Path: desktop}, {Client: "Claude Code", Path: code},
			}}}
			c := r.vaultExposure()
			if (c.Status == Warn) != tt.warn || !strings.Contains(c.Detail, tt.detail) || (tt.warn && !strings.Contains(c.Fix, "VAULT_PATH")) {
				t.Fatalf("got %v %q (fix %q), want warn=%v with %q", c.Status, c.Detail, c.Fix, tt.warn, tt.detail)
			}
		})
	}
}
