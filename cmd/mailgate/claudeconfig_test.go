package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeClaudeConfig parses stdout, which must hold one JSON document and
// nothing else, and returns the named entry.
func decodeClaudeConfig(t *testing.T, stdout []byte, name string) claudeServer {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var doc struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than the JSON: %s", stdout)
	}
	e, ok := doc.MCPServers[name]
	if !ok || len(doc.MCPServers) != 1 {
		t.Fatalf("mcpServers = %v, want only %q", doc.MCPServers, name)
	}
	return e
}

func TestClaudeConfig(t *testing.T) {
	home := t.TempDir()
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	envFile := filepath.Join(t.TempDir(), "other.env")
	os.WriteFile(envFile, []byte("SEND_LIMIT_PER_HOUR=3\n"), 0o600)
	tests := []struct {
		name     string
		vars     []string
		args     []string
		wantArgs []string
		wantEnv  map[string]string
	}{
		{name: "defaults", vars: []string{"MAILGATE_HOME=" + home},
			wantArgs: []string{"serve"}, wantEnv: map[string]string{"MAILGATE_HOME": home, "DEV_MODE": "true"}},
		{name: "sandbox", vars: []string{"MAILGATE_HOME=" + home, "DEV_MODE=false"}, args: []string{"--sandbox"},
			wantArgs: []string{"serve", "--sandbox"}, wantEnv: map[string]string{"MAILGATE_HOME": home, "DEV_MODE": "false"}},
		{name: "set paths are absolute, secrets and HTTP settings left out",
			vars: []string{"MAILGATE_HOME=" + home, "VAULT_PATH=notes/vault", "MAILGATE_TOOLS=email", "MAILGATE_LOG_LEVEL=debug",
				"AGENT_MAIL_BEARER_TOKEN=s3cret", "AGENT_MAIL_HTTP_ADDR=127.0.0.1:9999"},
			args:     []string{"--db", "state/x.db", "--name", "mail"},
			wantArgs: []string{"serve"},
			wantEnv: map[string]string{"MAILGATE_HOME": home, "DEV_MODE": "true", "VAULT_PATH": filepath.Join(home, "notes", "vault"),
				"MAILGATE_DB": filepath.Join(home, "state", "x.db"), "MAILGATE_TOOLS": "email", "MAILGATE_LOG_LEVEL": "debug"}},
		{name: "env file elsewhere", vars: []string{"MAILGATE_HOME=" + home}, args: []string{"--env-file", envFile},
			wantArgs: []string{"serve", "--env-file", envFile}, wantEnv: map[string]string{"MAILGATE_HOME": home, "DEV_MODE": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSetupRun(append(tt.vars, "HOME=/home/u"), nil, append([]string{"claude-config"}, tt.args...)...)
			if code := r.run(t); code != 0 {
				t.Fatalf("exit %d: %s", code, r.stderr)
			}
			name := "mailgate"
			if strings.Contains(strings.Join(tt.args, " "), "--name mail") {
				name = "mail"
			}
			e := decodeClaudeConfig(t, []byte(r.stdout.String()), name)
			if e.Command != self || !filepath.IsAbs(e.Command) {
				t.Errorf("command = %q, want %q", e.Command, self)
			}
			if !reflect.DeepEqual(e.Args, tt.wantArgs) || !reflect.DeepEqual(e.Env, tt.wantEnv) {
				t.Errorf("args %q env %v, want %q %v", e.Args, e.Env, tt.wantArgs, tt.wantEnv)
			}
			for k, v := range e.Env {
				if strings.Contains(k, "PATH") || k == "MAILGATE_HOME" || k == "MAILGATE_DB" {
					if !filepath.IsAbs(v) {
						t.Errorf("%s = %q is not absolute", k, v)
					}
				}
			}
			if !strings.Contains(r.stderr.String(), "claude_desktop_config.json") || !strings.Contains(r.stderr.String(), "quit Claude Desktop completely") {
				t.Errorf("stderr = %q", r.stderr)
			}
		})
	}
}

// TestClaudeConfigBinary: the command is the real binary's resolved path,
// even when it is started through a symlink, and stdout is only JSON.
func TestClaudeConfigBinary(t *testing.T) {
	bin, _ := filepath.EvalSymlinks(builtBinary(t))
	link := filepath.Join(t.TempDir(), "mailgate-link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command(link, "claude-config")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home} // no MAILGATE_HOME: the working directory
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	e := decodeClaudeConfig(t, stdout.Bytes(), "mailgate")
	realHome, _ := filepath.EvalSymlinks(home)
	if e.Command != bin || (e.Env["MAILGATE_HOME"] != home && e.Env["MAILGATE_HOME"] != realHome) {
		t.Fatalf("command %q (want %q), home %q (want %q)", e.Command, bin, e.Env["MAILGATE_HOME"], home)
	}
	if !strings.Contains(stderr.String(), "run \"mailgate auth\" first") {
		t.Errorf("stderr = %s", stderr.String())
	}
}

func TestClaudeDesktopPaths(t *testing.T) {
	env := map[string]string{"HOME": "/Users/u", "APPDATA": `C:\Users\u\AppData\Roaming`}
	getenv := func(k string) string { return env[k] }
	for goos, want := range map[string]string{
		"darwin":  "/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
		"linux":   "/Users/u/.config/Claude/claude_desktop_config.json",
		"windows": filepath.Join(`C:\Users\u\AppData\Roaming`, "Claude", "claude_desktop_config.json"),
	} {
		if got, _ := claudeDesktopPaths(goos, getenv); got != want {
			t.Errorf("%s: %s, want %s", goos, got, want)
		}
	}
}
