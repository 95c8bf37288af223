package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestExternalClients drives the built binary with clients that are not
// go-sdk: the MCP Inspector CLI and the TypeScript SDK. `make test` installs
// them (npm ci --prefix .ci) and sets MAILGATE_CLIENTS.
func TestExternalClients(t *testing.T) {
	parallel(t)
	nodeModules := os.Getenv("MAILGATE_CLIENTS")
	if nodeModules == "" {
		t.Skip("MAILGATE_CLIENTS is not set: run `make test-clients` (installs the MCP Inspector and the TypeScript SDK)")
	}
	bin := builtBinary(t)

	t.Run("inspector tools/list", func(t *testing.T) {
		out := inspector(t, nodeModules, bin, "--method", "tools/list")
		var got struct { // --format json wraps the answer in {"result": …}
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("inspector output is not the tools list: %v\n%s", err, out)
		}
		var names []string
		for _, tl := range got.Result.Tools {
			names = append(names, tl.Name)
		}
		sort.Strings(names)
		want := strings.Join(emailTools, ",")
		if strings.Join(names, ",") != want {
			t.Fatalf("tools = %v, want %s", names, want)
		}
	})

	t.Run("inspector tools/call search_email", func(t *testing.T) {
		out := inspector(t, nodeModules, bin, "--method", "tools/call", "--tool-name", "search_email",
			"--tool-arg", "query=invoice", "--tool-arg", "max_results=2")
		if !strings.Contains(string(out), `Found `) || !strings.Contains(string(out), "Invoice #1234") {
			t.Fatalf("search through the inspector did not find the invoice:\n%s", out)
		}
	})

	t.Run("typescript sdk", func(t *testing.T) {
		script, _ := filepath.Abs("../../.ci/ts-client.mjs")
		cmd := exec.Command("node", script, bin, t.TempDir())
		cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
		cmd.Dir = filepath.Dir(script)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ts client: %v\n%s", err, stderrOf(err))
		}
		var got struct {
			Tools []struct {
				Name        string         `json:"name"`
				Annotations map[string]any `json:"annotations"`
			} `json:"tools"`
			Search struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"search"`
			BadArgs struct {
				IsError bool   `json:"isError"`
				Thrown  string `json:"thrown"`
			} `json:"badArgs"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("ts client output: %v\n%s", err, out)
		}
		if len(got.Tools) != len(emailTools) {
			t.Fatalf("ts client saw %d tools", len(got.Tools))
		}
		for _, tl := range got.Tools {
			for _, k := range []string{"readOnlyHint", "destructiveHint", "openWorldHint", "idempotentHint"} {
				if _, ok := tl.Annotations[k]; !ok {
					t.Errorf("tool %s: annotation %s not set explicitly", tl.Name, k)
				}
			}
		}
		if got.Search.IsError || len(got.Search.Content) == 0 || !strings.Contains(got.Search.Content[0].Text, "Invoice #1234") {
			t.Fatalf("search_email via the TypeScript SDK: %+v", got.Search)
		}
		if !got.BadArgs.IsError && got.BadArgs.Thrown == "" {
			t.Fatalf("max_results=500 was accepted")
		}
	})
}

func inspector(t *testing.T, nodeModules, bin string, args ...string) []byte {
	t.Helper()
	cli := filepath.Join(nodeModules, ".bin", "mcp-inspector")
	full := append([]string{"--cli", bin, "serve", "--sandbox"}, args...)
	full = append(full, "--format", "json", "-e", "MAILGATE_HOME="+t.TempDir(), "-e", "MAILGATE_TOOLS=email")
	cmd := exec.Command(cli, full...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-inspector %s: %v\n%s\n%s", strings.Join(full, " "), err, out, stderrOf(err))
	}
	return out
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
