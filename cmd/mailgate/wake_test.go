package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestWakeAcrossProcesses: agents learn of mail without polling, across
// processes sharing one store. One `mailgate serve` holds a client
// subscribed to BlueLake's inbox; a second `mailgate serve` (another
// agent's) sends; `mailgate watch --exec` runs a command for BlueLake's
// mail. The subscriber is notified, the command runs once per message for
// BlueLake (not for mail to others), and what the sender wrote reaches the
// command only as data: a subject holding a command substitution is not run.
func TestWakeAcrossProcesses(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	w, project, sender := agentMailWorld(t, home, "GreenDog", "BlueLake", "RedFox")

	// The subscriber: a second server process, as the busy agent's client
	// runs it.
	updated := make(chan string, 16)
	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir = "/"
	cmd.Env = w.env
	cmd.Stderr = &testWriter{t: t}
	c := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	sub, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	inbox := "resource://inbox/BlueLake?project=" + url.QueryEscape(project)
	if err := sub.Subscribe(t.Context(), &mcp.SubscribeParams{URI: inbox}); err != nil {
		t.Fatalf("subscribing to %s: %v", inbox, err)
	}

	// The hook: watch --exec for BlueLake, appending what it is given.
	dir := t.TempDir()
	log, pwned := filepath.Join(dir, "hook.log"), filepath.Join(dir, "pwned")
	wctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	watch := exec.CommandContext(wctx, builtBinary(t), "watch", "--project", project, "--agent", "BlueLake", "--interval", "50ms",
		"--exec", `printf '%s|%s|%s\n' "$MAILGATE_MESSAGE_ID" "$MAILGATE_FROM" "$MAILGATE_SUBJECT" >> `+log)
	watch.Env = w.env
	var out testutil.Buffer
	watch.Stdout, watch.Stderr = &out, &out
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = watch.Wait() }()
	testutil.Eventually(t, 20*time.Second, func() error {
		if !strings.Contains(out.String(), "following") {
			return fmt.Errorf("watch has not started: %q", out.String())
		}
		return nil
	})

	send := func(to, subject string) {
		t.Helper()
		if text, isErr := call(t, sender, "send_message", map[string]any{"project_key": project, "sender_name": "GreenDog", "to": []string{to}, "subject": subject, "body_md": "b"}); isErr {
			t.Fatalf("send_message: %s", text)
		}
	}
	send("RedFox", "for RedFox only")
	sent := time.Now()
	send("BlueLake", "$(touch "+pwned+") tests pass")
	select {
	case got := <-updated:
		if got != inbox {
			t.Fatalf("notified for %q, want %q", got, inbox)
		}
		t.Logf("subscriber notified %v after the send from another process", time.Since(sent).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("the subscriber was not notified of mail sent by another process")
	}

	var lines []string
	testutil.Eventually(t, 20*time.Second, func() error {
		b, _ := os.ReadFile(log)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 {
			return fmt.Errorf("--exec has not run; watch said:\n%s", out.String())
		}
		return nil
	})
	if len(lines) != 1 || !strings.HasSuffix(lines[0], "|GreenDog|$(touch "+pwned+") tests pass") {
		t.Errorf("--exec ran with %q; want one run for BlueLake's message, the subject as text", lines)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("a command in a subject was run by --exec")
	}
}

// TestAgentsSnippetFromASubfolder: run in a subfolder of a git repository,
// agents-snippet names the repository's top as the project key, as `mailgate
// mailbox` and the servers do (one rule: gitrepo.ProjectKey), and tells the
// agent both ways to be woken.
func TestAgentsSnippetFromASubfolder(t *testing.T) {
	parallel(t)
	testutil.NeedGit(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "backend", "api")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES=" + root}
	initCmd := exec.Command("git", "init", "-q", repo)
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	out, code := runIn(t, sub, env, "agents-snippet")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "`"+repo+"`") || strings.Contains(out, sub) {
		t.Errorf("the snippet made in %s should name the repository %s:\n%s", sub, repo, out)
	}
	for _, want := range []string{"resource://inbox/<your name>?project=" + url.QueryEscape(repo), "--agent <your name> --exec"} {
		if !strings.Contains(out, want) {
			t.Errorf("the snippet lacks %q:\n%s", want, out)
		}
	}
}

// TestWakeOverHTTP: the same over Streamable HTTP: a client of `serve
// --http` subscribed to an inbox is notified (on its standalone SSE
// stream) when a stdio server of the same home delivers mail to it.
func TestWakeOverHTTP(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	s := startHTTPServerHere(t, "AGENT_MAIL_BEARER_TOKEN="+httpToken, "MAILGATE_TOOLS=agentmail", "MAILGATE_HOME="+home)
	_, project, sender := agentMailWorld(t, home, "GreenDog", "BlueLake")
	updated := make(chan string, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "http-subscriber", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	})
	hc := &http.Client{Transport: bearerRoundTripper{httpToken}}
	sub, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	inbox := "resource://inbox/BlueLake?project=" + url.QueryEscape(project)
	if err := sub.Subscribe(t.Context(), &mcp.SubscribeParams{URI: inbox}); err != nil {
		t.Fatalf("subscribing over HTTP: %v", err)
	}
	if text, isErr := call(t, sender, "send_message", map[string]any{"project_key": project, "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "over HTTP", "body_md": "b"}); isErr {
		t.Fatal(text)
	}
	select {
	case got := <-updated:
		if got != inbox {
			t.Fatalf("notified for %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the HTTP subscriber was not notified; server log:\n%s", s.logs())
	}
}

// agentMailWorld is an agent-mail home with a project (a folder of its own)
// and the agents registered in it, through a `mailgate serve` (the sender,
// returned with the world).
func agentMailWorld(t *testing.T, home string, agents ...string) (*world, string, *mcp.ClientSession) {
	t.Helper()
	w := &world{t: t, home: home, env: []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"}}
	project := t.TempDir()
	sender := w.connect()
	if text, isErr := call(t, sender, "ensure_project", map[string]any{"human_key": project}); isErr {
		t.Fatalf("ensure_project: %s", text)
	}
	for _, a := range agents {
		if text, isErr := call(t, sender, "register_agent", map[string]any{"project_key": project, "name": a, "program": "p", "model": "m"}); isErr {
			t.Fatalf("register_agent %s: %s", a, text)
		}
	}
	return w, project, sender
}
