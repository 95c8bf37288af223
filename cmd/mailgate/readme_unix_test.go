//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestREADMEHTTPExample runs README's HTTP example exactly as written, with
// bash and curl, on a fresh machine (a new HOME, no settings, no Gmail):
// serve --http generates and saves a token, config get prints it, and the
// curl session initializes and lists the tools. Then it connects an MCP
// client with README's mcpServers entry for HTTP clients.
func TestREADMEHTTPExample(t *testing.T) {
	parallel(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	// README's example uses the default address: the test needs it free.
	ln, err := net.Listen("tcp", "127.0.0.1:8765")
	if err != nil {
		t.Skipf("127.0.0.1:8765 is in use, README's example cannot run here: %v", err)
	}
	ln.Close()
	bin := t.TempDir()
	if err := os.Symlink(builtBinary(t), filepath.Join(bin, "mailgate")); err != nil {
		t.Fatal(err)
	}
	home, work := t.TempDir(), t.TempDir()
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home}

	script := readmeBlock(t, "README-HTTP-EXAMPLE")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
	cmd.Dir, cmd.Env = work, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Cleanup(func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // a server left behind by a failure
		}
	})
	if err != nil {
		t.Fatalf("README's HTTP example failed: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	for _, want := range []string{`"serverInfo"`, `"name":"search_email"`, `"name":"register_agent"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the curl session's output lacks %s:\n%s", want, out)
		}
	}
	settings, err := os.ReadFile(filepath.Join(home, ".mailgate", ".env"))
	tok := regexp.MustCompile(`(?m)^AGENT_MAIL_BEARER_TOKEN=([0-9a-f]{64})$`).FindSubmatch(settings)
	if err != nil || tok == nil {
		t.Fatalf("no generated token in the settings file (%v):\n%s", err, settings)
	}
	if !strings.Contains(stderr.String(), "generated a bearer token") || strings.Contains(stderr.String(), string(tok[1])) {
		t.Errorf("the server's log should say a token was generated and where, never the token:\n%s", stderr.String())
	}

	// README's mcpServers entry for HTTP clients, with the token in place.
	entryText := strings.ReplaceAll(readmeBlock(t, "README-HTTP-CLIENT"), "<token>", string(tok[1]))
	var entry struct {
		MCPServers map[string]struct {
			Type    string
			URL     string
			Headers map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(entryText), &entry); err != nil {
		t.Fatalf("README's client entry is not JSON: %v", err)
	}
	e := entry.MCPServers["mailgate"]
	if e.Type != "http" || e.URL == "" {
		t.Fatalf("README's client entry: %+v", e)
	}
	srv := exec.Command(builtBinary(t), "serve", "--http")
	srv.Dir, srv.Env = work, env
	srv.Stderr = &testWriter{t: t}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	hc := &http.Client{Transport: headerTransport{headers: e.Headers}}
	var cs *mcp.ClientSession
	testutil.Eventually(t, 30*time.Second, func() error {
		c := mcp.NewClient(&mcp.Implementation{Name: "readme", Version: "0"}, nil)
		cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.URL, HTTPClient: hc}, nil)
		if err != nil {
			return fmt.Errorf("connecting with README's entry: %w", err)
		}
		return nil
	})
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < 10 {
		t.Errorf("README's entry lists %d tools", n)
	}
}

// headerTransport adds an entry's headers to every request, as a client
// reading an mcpServers file does.
type headerTransport struct{ headers map[string]string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
