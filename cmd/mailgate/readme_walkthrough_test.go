//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestREADMEWalkthrough runs README's first screen as a new user would, in
// a fresh HOME: the clone's install line (README-CLONE-INSTALL, into an
// empty GOBIN in make test, one kept between runs otherwise), "mailgate claude-config --install", "mailgate demo",
// then the sandbox in a real MCP client started from the entry
// claude-config --install --sandbox wrote, with DEV_MODE off as README says
// to send for real: a send is refused with a request file, "mailgate
// approvals approve --yes" approves it, the same call sends it once, and
// the next identical call is told it was already sent. Each step's
// promised output is asserted.
func TestREADMEWalkthrough(t *testing.T) {
	parallelLong(t, 1)
	if testing.Short() {
		t.Skip("builds mailgate with go install")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	// The go command's caches stay the user's: a fresh HOME would rebuild
	// every dependency (and need the network) for the same binary.
	goenv := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE", "GOPATH")
	goenv.Env = append(os.Environ(), "HOME="+realHome)
	caches, err := goenv.Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	c := strings.Split(strings.TrimSpace(string(caches)), "\n")
	if len(c) != 3 {
		t.Fatalf("go env: %q", caches)
	}
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	home, gobin := t.TempDir(), t.TempDir()
	if !testutil.Full() {
		// A plain go test installs into a folder kept between runs: the go
		// command links nothing when the binary there is up to date (a
		// link is seconds of CPU). make test (MAILGATE_TEST_FULL) installs
		// into an empty folder, so the line is seen to put the binary
		// there.
		if dir, err := testutil.CacheDir(repo, "gobin"); err == nil {
			gobin = dir
		}
	}
	gobin, _ = filepath.EvalSymlinks(gobin)
	env := []string{"HOME=" + home, "PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOCACHE=" + c[0], "GOMODCACHE=" + c[1], "GOPATH=" + c[2], "GOBIN=" + gobin, "GOTOOLCHAIN=local"}
	sh := func(dir, line string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-e", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		return string(out)
	}
	work := t.TempDir() // the user's own folder: nothing below depends on the clone

	// Install, from the clone.
	sh(repo, readmeBlock(t, "README-CLONE-INSTALL"))
	bin := filepath.Join(gobin, "mailgate")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the clone's install line left no %s: %v", bin, err)
	}

	// Connect.
	out := sh(work, "mailgate claude-config --install")
	desktop, _ := claudeDesktopPaths(runtime.GOOS, func(k string) string { return map[string]string{"HOME": home}[k] })
	for _, want := range []string{`Wrote the "mailgate" entry into ` + desktop, "Quit Claude Desktop completely"} {
		if !strings.Contains(out, want) {
			t.Errorf("claude-config --install does not say %q:\n%s", want, out)
		}
	}
	if e := desktopEntry(t, desktop); e.Command != bin || strings.Join(e.Args, " ") != "serve --tools email" {
		t.Errorf("the entry is %+v, want %s serve --tools email", e, bin)
	}

	// Try it.
	out = sh(work, "mailgate demo")
	for _, want := range []string{"→ search_email", "→ send_email", "Email sent successfully", "Reply sent successfully", "mailgate approvals approve --yes", "is deleted now"} {
		if !strings.Contains(out, want) {
			t.Errorf("mailgate demo does not show %q:\n%s", want, out)
		}
	}

	// The sandbox in an MCP client, started from the entry as Claude
	// Desktop starts it (its own thin environment, no working directory).
	sh(work, "mailgate claude-config --install --sandbox")
	out = sh(work, "mailgate config set DEV_MODE false")
	if !strings.Contains(out, "Set DEV_MODE=false in "+filepath.Join(home, ".mailgate", ".env")) {
		t.Errorf("config set DEV_MODE false:\n%s", out)
	}
	e := desktopEntry(t, desktop)
	if !strings.Contains(strings.Join(e.Args, " "), "--sandbox") {
		t.Fatalf("the --sandbox entry is %+v", e)
	}
	cmd := exec.Command(e.Command, e.Args...)
	cmd.Dir, cmd.Env = "/", []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	client := mcp.NewClient(&mcp.Implementation{Name: "walkthrough", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"to": "alice@example.com", "subject": "Invoice 1234", "body": "Hi Alice,\n\npaid today.\n"}
	text, isErr := call(t, cs, "send_email", args)
	m := regexp.MustCompile(`vault/Pending_Approval/(\S+)\.md`).FindStringSubmatch(text)
	if !isErr || m == nil || !strings.HasPrefix(text, "Rejected: No matching approval file found in vault/Approved/ for sending to a***@example.com.") ||
		!strings.Contains(text, "a hand-written file is not used (APPROVAL_MODE=content)") {
		t.Fatalf("first send_email: (isError=%v)\n%s", isErr, text)
	}
	out = sh(work, "mailgate approvals approve --yes "+m[1])
	for _, want := range []string{"Pending_Approval/" + m[1] + ".md → Approved/", "To       alice@example.com", "send"} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals approve --yes does not say %q:\n%s", want, out)
		}
	}
	if text, isErr = call(t, cs, "send_email", args); isErr || !strings.HasPrefix(text, "Email sent successfully. Message ID: ") {
		t.Fatalf("send_email after the approval: (isError=%v)\n%s", isErr, text)
	}
	if text, isErr = call(t, cs, "send_email", args); !isErr || !strings.Contains(text, "This exact email was already sent at ") {
		t.Fatalf("send_email once more: (isError=%v), want \"already sent\":\n%s", isErr, text)
	}
}

// desktopEntry reads the mailgate entry of Claude Desktop's configuration.
func desktopEntry(t *testing.T, path string) claudeServer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.MCPServers["mailgate"]
}
