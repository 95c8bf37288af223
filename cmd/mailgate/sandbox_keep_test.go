package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// startSandbox starts `serve --sandbox` on home, in-process (serveHere),
// with the home's settings file as given (env holds no DEV_MODE), and
// returns the session and the server's stderr.
func startSandbox(t *testing.T, home string) (*mcp.ClientSession, *testutil.Buffer) {
	t.Helper()
	stderr := &testutil.Buffer{}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=email", "MAILGATE_LOG_LEVEL=info"}
	return serveHere(t, env, stderr, "serve", "--sandbox"), stderr
}

// TestSandboxKeepsItsMailboxAndDelivers: with DEV_MODE=true in the home's
// settings, an approved send_email on the sandbox is delivered into its
// own Sent folder (the start line says so), and after a restart on the
// same home, Sent still holds it, as Done/ does.
func TestSandboxKeepsItsMailboxAndDelivers(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".env"), []byte("DEV_MODE=true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, home: home}
	cs, stderr := startSandbox(t, home)
	send := map[string]any{"to": "alice@example.com", "subject": "Kept across restarts", "body": "Hi Alice,\nPaid today.\n"}
	if text, isErr := call(t, cs, "send_email", send); !isErr || !strings.HasPrefix(text, "Rejected: No matching approval file") {
		t.Fatalf("first send_email = %q", text)
	}
	if n := w.approveAll(); n != 1 {
		t.Fatalf("%d requests approved", n)
	}
	text, isErr := call(t, cs, "send_email", send)
	if isErr || !regexp.MustCompile(`^Email sent successfully\. Message ID: \w+`).MatchString(text) {
		t.Fatalf("approved send_email with DEV_MODE=true on the sandbox = %q", text)
	}
	sentID := regexp.MustCompile(`Message ID: (\w+)`).FindStringSubmatch(text)[1]
	mailbox := filepath.Join(home, "sandbox", "mailbox.json")
	for _, want := range []string{`msg="mailgate serving over stdio"`,
		`dev_mode="DEV_MODE=true does not apply to the sandbox: approved emails are delivered into the sandbox mailbox"`,
		"nothing leaves this machine; new, kept from now on in " + mailbox} {
		waitLogged(t, stderr, want)
	}
	if done := w.files("Done"); len(done) != 1 {
		t.Fatalf("Done/ holds %v", done)
	}
	cs.Close()

	cs, stderr = startSandbox(t, home)
	text, _ = call(t, cs, "search_email", map[string]any{"query": "in:sent restarts"})
	if !strings.Contains(text, "Subject: Kept across restarts") || !strings.Contains(text, "Message ID: "+sentID) {
		t.Errorf("after a restart, in:sent finds %q; want message %s", text, sentID)
	}
	waitLogged(t, stderr, "nothing leaves this machine; kept in "+mailbox+", as the last sandbox server left it")
	// The seed went in once: the mailbox holds one invoice, not two.
	if text, _ := call(t, cs, "search_email", map[string]any{"query": `subject:"Invoice #1234 for October 2026"`}); strings.Count(text, "Message ID:") != 1 {
		t.Errorf("the seeded invoice after a restart:\n%s", text)
	}
}

// waitLogged waits until the server's stderr holds want. The start line is
// written before the first tool answers, but it reaches stderr's buffer
// through the copying goroutine of exec.Cmd, which a loaded machine can run
// after the answer (the CI run of 578466f checked the buffer empty).
func waitLogged(t *testing.T, stderr *testutil.Buffer, want string) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, func() error {
		if !strings.Contains(stderr.String(), want) {
			return fmt.Errorf("the start line lacks %q:\n%s", want, stderr)
		}
		return nil
	})
}
