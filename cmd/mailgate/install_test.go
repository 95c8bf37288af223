package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestClaudeConfigInstall: --install merges the entry into the client's
// existing configuration, keeping the other server and keys, and keeps the
// file as it was in a timestamped backup; a second install replaces
// mailgate's entry rather than adding one, and keeps a second backup; a
// file that does not parse is refused (exit 1) and left byte for byte as
// it was, with no backup and no new file. In-process through main's
// dispatch and exit status (so the entry's command is the test binary),
// but for one refusal through the built binary (its exit status 1);
// TestClaudeConfigBinary shows the binary writes its own path.
func TestClaudeConfigInstall(t *testing.T) {
	parallel(t)
	bin, _ := os.Executable()
	bin, _ = filepath.EvalSymlinks(bin)
	userHome := t.TempDir()
	vars := []string{"HOME=" + userHome, "XDG_CONFIG_HOME=" + filepath.Join(userHome, ".config"), "APPDATA=" + filepath.Join(userHome, "AppData")}
	run := func(args ...string) (string, int) {
		r := newSetupRun(vars, nil, append([]string{"claude-config", "--install"}, args...)...)
		r.env.dir = userHome
		code := r.run(t)
		return r.stdout.String() + r.stderr.String(), code
	}
	runBinary := func(args ...string) (string, int) {
		return runIn(t, userHome, vars, append([]string{"claude-config", "--install"}, args...)...)
	}
	desktop, _ := claudeDesktopPaths(runtime.GOOS, func(k string) string {
		return map[string]string{"HOME": userHome, "XDG_CONFIG_HOME": filepath.Join(userHome, ".config"), "APPDATA": filepath.Join(userHome, "AppData")}[k]
	})
	const other = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
  }
}
`
	for _, tt := range []struct {
		client, file, before string
		check                func(t *testing.T, after []byte)
	}{
		{clientDesktop, desktop, other, func(t *testing.T, after []byte) {
			var f struct {
				GlobalShortcut string
				MCPServers     map[string]claudeServer `json:"mcpServers"`
			}
			if err := json.Unmarshal(after, &f); err != nil {
				t.Fatal(err)
			}
			if f.GlobalShortcut != "Ctrl+Space" || f.MCPServers["filesystem"].Command != "npx" || len(f.MCPServers) != 2 {
				t.Errorf("other settings lost:\n%s", after)
			}
			if e := f.MCPServers["mailgate"]; e.Command != bin || strings.Join(e.Args, " ") != "serve --tools email" {
				t.Errorf("mailgate entry = %+v", e)
			}
			if i, j := strings.Index(string(after), "globalShortcut"), strings.Index(string(after), "mcpServers"); i > j {
				t.Errorf("keys reordered:\n%s", after)
			}
		}},
		{clientCode, filepath.Join(userHome, ".claude.json"), `{"numStartups": 7, "projects": {"/src": {"mcpServers": {}}}, "mcpServers": {"other": {"type": "stdio", "command": "other", "args": []}}}`, func(t *testing.T, after []byte) {
			var f struct {
				NumStartups int
				Projects    map[string]any
				MCPServers  map[string]claudeServer `json:"mcpServers"`
			}
			if err := json.Unmarshal(after, &f); err != nil {
				t.Fatal(err)
			}
			if f.NumStartups != 7 || f.Projects["/src"] == nil || f.MCPServers["other"].Command != "other" {
				t.Errorf("other settings lost:\n%s", after)
			}
			if e := f.MCPServers["mailgate"]; e.Type != "stdio" || e.Command != bin || strings.Join(e.Args, " ") != "serve" {
				t.Errorf("mailgate entry = %+v", e)
			}
		}},
		{clientCodex, filepath.Join(userHome, ".codex", "config.toml"), "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other\"\n", func(t *testing.T, after []byte) {
			var f struct {
				Model   string
				Servers map[string]struct {
					Command string
					Args    []string
				} `toml:"mcp_servers"`
			}
			if _, err := toml.Decode(string(after), &f); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(after), "# mine\n") || f.Model != "o3" || f.Servers["other"].Command != "other" || f.Servers["mailgate"].Command != bin {
				t.Errorf("after install:\n%s", after)
			}
		}},
	} {
		t.Run(tt.client, func(t *testing.T) {
			os.MkdirAll(filepath.Dir(tt.file), 0o700)
			if err := os.WriteFile(tt.file, []byte(tt.before), 0o600); err != nil {
				t.Fatal(err)
			}
			// The second install finds the entry as it would write it:
			// nothing is written, and no second backup piles up.
			for round := 1; round <= 2; round++ {
				out, code := run("--client", tt.client)
				said := "Wrote the \"mailgate\" entry into " + tt.file
				if round == 2 {
					said = "The \"mailgate\" entry in " + tt.file + " is already this one: nothing was written (and no backup made)."
				}
				if code != 0 || !strings.Contains(out, said) {
					t.Fatalf("round %d: exit %d, want %q:\n%s", round, code, said, out)
				}
				after, _ := os.ReadFile(tt.file)
				tt.check(t, after)
				if n := strings.Count(string(after), bin); n != 1 {
					t.Errorf("round %d: the binary appears %d times:\n%s", round, n, after)
				}
				backups, _ := filepath.Glob(tt.file + ".bak-*")
				if len(backups) != 1 {
					t.Fatalf("round %d: backups %v", round, backups)
				}
				if first, _ := os.ReadFile(backups[0]); string(first) != tt.before {
					t.Errorf("backup %s holds:\n%s", backups[0], first)
				}
				if named := strings.Contains(out, "kept in "+tt.file+".bak-"); named != (round == 1) {
					t.Errorf("round %d: the backup named: %v:\n%s", round, named, out)
				}
			}
		})
	}

	t.Run("unparsable", func(t *testing.T) {
		for i, tt := range []struct{ client, file, content string }{
			{clientDesktop, desktop, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n"},
			{clientDesktop, desktop, `{"mcpServers": ["not", "an", "object"]}`},
			{clientCode, filepath.Join(userHome, ".claude.json"), `{"a": 1} {"b": 2}`},
			{clientCodex, filepath.Join(userHome, ".codex", "config.toml"), "[mcp_servers.x\ncommand = 1\n"},
		} {
			os.MkdirAll(filepath.Dir(tt.file), 0o700)
			for _, b := range must(filepath.Glob(tt.file + ".bak-*")) {
				os.Remove(b)
			}
			if err := os.WriteFile(tt.file, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			before := must(os.ReadDir(filepath.Dir(tt.file)))
			install := run
			if i == 0 {
				install = runBinary
			}
			out, code := install("--client", tt.client)
			if code != 1 || !strings.Contains(out, "nothing was changed") || !strings.Contains(out, tt.file) {
				t.Errorf("%s %q: exit %d:\n%s", tt.client, tt.content, code, out)
			}
			if got, _ := os.ReadFile(tt.file); string(got) != tt.content {
				t.Errorf("%s: the file was changed:\n%s", tt.client, got)
			}
			if after := must(os.ReadDir(filepath.Dir(tt.file))); len(after) != len(before) {
				t.Errorf("%s: files were added next to it: %v", tt.client, after)
			}
		}
	})

	t.Run("new file", func(t *testing.T) {
		os.RemoveAll(filepath.Dir(desktop))
		out, code := run("--tools", "email,agentmail")
		if code != 0 || strings.Contains(out, "kept in") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		var f struct {
			MCPServers map[string]claudeServer `json:"mcpServers"`
		}
		if err := json.Unmarshal(must(os.ReadFile(desktop)), &f); err != nil || strings.Join(f.MCPServers["mailgate"].Args, " ") != "serve --tools email,agentmail" {
			t.Fatalf("%v: %+v", err, f)
		}
		// --tools is the entry's choice, never saved as the home's setting.
		if b, err := os.ReadFile(filepath.Join(userHome, ".mailgate", ".env")); err == nil && strings.Contains(string(b), "MAILGATE_TOOLS") {
			t.Errorf("--tools went into the settings file: %s", b)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// FuzzMergeMCPServers: whatever a client's configuration file holds, the
// merge either refuses it or returns JSON that holds every top-level key
// of the original, the other servers unchanged, and exactly the new entry.
func FuzzMergeMCPServers(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers":{}}`, `{"a":1,"mcpServers":{"x":{"command":"y"}}}`,
		`{"mcpServers":{"mailgate":{"command":"old"}}}`, `{"mcpServers":null}`, `[1]`, `{"a":1}{}`, `{"a":1,"a":2}`, " \n\t{\"b\": [1, {\"c\": \"\\u00e9\"}]}\n"} {
		f.Add([]byte(s))
	}
	entry := json.RawMessage(`{"command":"/bin/mailgate","args":["serve"]}`)
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := mergeMCPServers(doc, "mailgate", entry)
		if err != nil {
			return
		}
		var before, after map[string]json.RawMessage
		if len(bytes.TrimSpace(doc)) > 0 {
			if err := json.Unmarshal(doc, &before); err != nil {
				t.Fatalf("accepted a document encoding/json refuses: %v", err)
			}
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("merged output is not JSON: %v\n%s", err, out)
		}
		for k, v := range before {
			if k == "mcpServers" {
				continue
			}
			if !jsonEqual(t, v, after[k]) {
				t.Fatalf("key %q changed: %s -> %s", k, v, after[k])
			}
		}
		var bs, as map[string]json.RawMessage
		json.Unmarshal(before["mcpServers"], &bs)
		if err := json.Unmarshal(after["mcpServers"], &as); err != nil {
			t.Fatalf("mcpServers: %v", err)
		}
		for k, v := range bs {
			if k != "mailgate" && !jsonEqual(t, v, as[k]) {
				t.Fatalf("server %q changed", k)
			}
		}
		if !jsonEqual(t, as["mailgate"], entry) || len(as) != len(bs)+btoi(bs["mailgate"] == nil) {
			t.Fatalf("entry: %s (servers %d -> %d)", as["mailgate"], len(bs), len(as))
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// FuzzMergeCodex: whatever Codex's config.toml holds, the merge either
// refuses it or returns TOML that parses, holds mailgate's entry, and keeps
// the other servers.
func FuzzMergeCodex(f *testing.F) {
	for _, s := range []string{"", "model = \"o3\"\n", "[mcp_servers.other]\ncommand = \"x\"\n", "[mcp_servers.mailgate]\ncommand = \"old\"\n[mcp_servers.mailgate.env]\nA = \"b\"\n[tui]\nx = 1\n",
		"mcp_servers = { mailgate = { command = \"x\" } }\n", "[mcp_servers.\"mailgate\"] # c\ncommand = \"y\"\n", "[[mcp_servers]]\n", "[mcp_servers.x\n"} {
		f.Add(s)
	}
	entry := claudeServer{Command: "/bin/mailgate", Args: []string{"serve"}, Env: map[string]string{"MAILGATE_HOME": "/h"}}
	f.Fuzz(func(t *testing.T, doc string) {
		out, err := mergeCodex([]byte(doc), "mailgate", entry)
		if err != nil {
			return
		}
		var before, after struct {
			Servers map[string]map[string]any `toml:"mcp_servers"`
		}
		decodeTOML(doc, &before)
		if err := decodeTOML(string(out), &after); err != nil {
			t.Fatalf("merged output does not parse: %v\n%s", err, out)
		}
		if after.Servers["mailgate"]["command"] != "/bin/mailgate" {
			t.Fatalf("entry missing:\n%s", out)
		}
		for k := range before.Servers {
			if _, ok := after.Servers[k]; !ok {
				t.Fatalf("server %q lost:\n%s", k, out)
			}
		}
	})
}
