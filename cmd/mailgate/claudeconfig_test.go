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

// The entry holds the command and, only when it is not the default,
// MAILGATE_HOME: settings live in the home's settings file, which the server
// and the terminal both read. Flags given to claude-config are saved there;
// settings only in this shell are pointed out (never a secret's value).
func TestClaudeConfig(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	userHome := t.TempDir()
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	envFile := filepath.Join(t.TempDir(), "other.env")
	os.WriteFile(envFile, []byte("SEND_LIMIT_PER_HOUR=3\n"), 0o600)
	tests := []struct {
		name      string
		vars      []string
		args      []string
		wantArgs  []string
		wantEnv   map[string]string
		wantSaved string   // the settings file afterwards
		wantErr   []string // in stderr
		notErr    []string // not in stderr
	}{
		{name: "default home: nothing but the command", vars: nil,
			wantArgs: []string{"serve", "--tools", "email"}, wantEnv: nil},
		{name: "another home", vars: []string{"MAILGATE_HOME=" + home},
			wantArgs: []string{"serve", "--tools", "email"}, wantEnv: map[string]string{"MAILGATE_HOME": home}},
		{name: "the default home given explicitly", vars: []string{"MAILGATE_HOME=~/.mailgate"},
			wantArgs: []string{"serve", "--tools", "email"}, wantEnv: nil},
		{name: "sandbox, DEV_MODE in the shell only", vars: []string{"MAILGATE_HOME=" + home, "DEV_MODE=false"}, args: []string{"--sandbox"},
			wantArgs: []string{"serve", "--tools", "email", "--sandbox"}, wantEnv: map[string]string{"MAILGATE_HOME": home},
			wantErr: []string{"DEV_MODE=false is set in this shell only", "the sandbox server started from this entry delivers approved emails into its own mailbox (kept in " + filepath.Join(home, "sandbox") + ") whatever DEV_MODE says"},
			notErr:  []string{"gets DEV_MODE="}},
		{name: "flags are saved in the settings file, secrets never shown",
			vars:      []string{"MAILGATE_HOME=" + home, "MAILGATE_TOOLS=email", "AGENT_MAIL_BEARER_TOKEN=s3cret"},
			args:      []string{"--db", "state/x.db", "--dev-mode=false", "--name", "mail"},
			wantArgs:  []string{"serve", "--tools", "email"},
			wantEnv:   map[string]string{"MAILGATE_HOME": home},
			wantSaved: "MAILGATE_DB=state/x.db\nDEV_MODE=false\n",
			wantErr:   []string{"Saved MAILGATE_DB=state/x.db in " + filepath.Join(home, ".env"), "Saved DEV_MODE=false", "gets DEV_MODE=false", "MAILGATE_TOOLS=email is set in this shell only", "AGENT_MAIL_BEARER_TOKEN=… is set"},
			notErr:    []string{"s3cret"}},
		{name: "env file elsewhere", vars: []string{"MAILGATE_HOME=" + home}, args: []string{"--env-file", envFile},
			wantArgs: []string{"serve", "--env-file", envFile, "--tools", "email"}, wantEnv: map[string]string{"MAILGATE_HOME": home}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(home, ".env"))
			r := newSetupRun(append(tt.vars, "HOME="+userHome), nil, append([]string{"claude-config"}, tt.args...)...)
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
			saved, _ := os.ReadFile(filepath.Join(home, ".env"))
			if string(saved) != tt.wantSaved {
				t.Errorf("settings file = %q, want %q", saved, tt.wantSaved)
			}
			for _, want := range append(tt.wantErr, "claude_desktop_config.json", "quit Claude Desktop completely") {
				if !strings.Contains(r.stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			for _, not := range tt.notErr {
				if strings.Contains(r.stderr.String()+r.stdout.String(), not) {
					t.Errorf("output shows %q:\n%s", not, r.stderr)
				}
			}
		})
	}
}

// TestClaudeConfigBinary: the command is the real binary's resolved path,
// even when it is started through a symlink, and stdout is only JSON. Run
// from / with the default home, the entry names no home at all (it once
// wrote "MAILGATE_HOME": "/"); a home of / is refused.
func TestClaudeConfigBinary(t *testing.T) {
	parallel(t)
	bin, _ := filepath.EvalSymlinks(builtBinary(t))
	link := filepath.Join(t.TempDir(), "mailgate-link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.Command(link, "claude-config")
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=" + home} // no MAILGATE_HOME
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	e := decodeClaudeConfig(t, stdout.Bytes(), "mailgate")
	if e.Command != bin || e.Env != nil || strings.Contains(stdout.String(), `"/"`) || strings.Contains(stdout.String(), "MAILGATE_HOME") {
		t.Fatalf("command %q (want %q), env %v; stdout:\n%s", e.Command, bin, e.Env, stdout.String())
	}
	if !strings.Contains(stderr.String(), "run \"mailgate auth\"") || !strings.Contains(stderr.String(), filepath.Join(home, ".mailgate")) {
		t.Errorf("stderr = %s", stderr.String())
	}

	cmd = exec.Command(link, "claude-config")
	cmd.Dir = "/"
	cmd.Env = []string{"HOME=" + home, "MAILGATE_HOME=/"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "MAILGATE_HOME") || strings.Contains(string(out), "mcpServers") {
		t.Fatalf("MAILGATE_HOME=/: %v\n%s", err, out)
	}
}

func TestClaudeDesktopPaths(t *testing.T) {
	parallel(t)
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
