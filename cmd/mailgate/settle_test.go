package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/testutil"
)

// Interrupted sends settled (issue 31): a process killed after Gmail took
// the email but before the Done file said so leaves "outcome not
// recorded"; the email's fixed Message-ID finds it in Sent, and an approval
// given again in the meantime does not deliver it a second time.

var settleArgs = map[string]any{"to": "carol@example.com", "subject": "Quarterly numbers", "body": "The numbers are in.\n"}

// killMidSend has a server ask for settleArgs' approval, approves it, has
// the same server send it, and SIGKILLs that server once Gmail holds the
// email (delivered is true) or while Gmail has not yet acted on it
// (delivered false), before the outcome is recorded either way. It
// returns the Done file's name. One server for the request and the send:
// its start-time settling (settleAtStart, in the background) has long
// found nothing to settle when the send is claimed; a server started just
// before the send could settle that very send from Sent (seen 4 times in
// 40 with the temporary files on tmpfs), and the kill would leave nothing
// unrecorded.
func killMidSend(t *testing.T, w *world, delivered bool) string {
	t.Helper()
	cmd := exec.Command(builtBinary(t), "serve")
	cmd.Dir, cmd.Env = "/", w.env
	c := mcp.NewClient(&mcp.Implementation{Name: "victim", Version: "0"}, nil)
	victim, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := call(t, victim, "send_email", settleArgs); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("first call: %q", text)
	}
	if w.approveAll() != 1 {
		t.Fatal("want one request to approve")
	}
	before := len(w.gm.Sent())
	if delivered {
		w.gm.Inject(localgmail.Fault{Op: "messages.send", Stall: true}) // Gmail sends, the answer never comes
	} else {
		w.gm.SetLatency(time.Hour) // the send is still on its way when the process dies
	}
	go victim.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_email", Arguments: settleArgs})
	testutil.Eventually(t, 20*time.Second, func() error {
		if len(w.files("Done")) != 1 {
			return errors.New("not claimed yet")
		}
		if delivered && len(w.gm.Sent()) == before {
			return errors.New("not in Gmail yet")
		}
		if !delivered && w.gm.Calls("messages.send") == 0 {
			return errors.New("send not started yet")
		}
		return nil
	})
	cmd.Process.Kill()
	victim.Close()
	w.gm.SetLatency(0)
	w.gm.ClearFaults()
	done := w.files("Done")[0]
	if st := frontStatus(w.read("Done", done)); st != "pending" {
		t.Fatalf("Done/%s says status %q after the kill, want the unrecorded \"pending\" it was approved with", done, st)
	}
	return done
}

func frontStatus(file string) string {
	m := regexp.MustCompile(`(?m)^status: *"?([a-z_]+)`).FindStringSubmatch(file)
	if m == nil {
		return ""
	}
	return m[1]
}

func frontField(file, key string) string {
	m := regexp.MustCompile(`(?m)^` + key + `: *"?([^"\n]*)`).FindStringSubmatch(file)
	if m == nil {
		return ""
	}
	return m[1]
}

// runApprovals runs `mailgate approvals` with the world's environment and
// returns its output (stdout, then stderr); it must succeed. In-process
// (runHere: main's dispatch and exit status, no process start): the tests
// that call it are about what the command settles and says, and each has
// its processes where a process is what is tested (the killed servers);
// TestApprovalsBinary and its kin run the command through the binary.
func runApprovals(t *testing.T, w *world, args ...string) string {
	t.Helper()
	out, code := runHere(t, "", w.env, append([]string{"approvals"}, args...)...)
	if code != 0 {
		t.Fatalf("mailgate approvals %v: exit %d\n%s", args, code, out)
	}
	return out
}

func TestKilledSendFoundInSentNotSentTwice(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	done := killMidSend(t, w, true)
	if n := len(w.gm.Sent()); n != 1 {
		t.Fatalf("%d emails in Sent, want the one delivered before the kill", n)
	}
	msgID := frontField(w.read("Done", done), "outgoing_message_id")
	if msgID == "" {
		t.Fatalf("Done/%s names no outgoing_message_id:\n%s", done, w.read("Done", done))
	}
	if raw, _ := w.gm.RawMessage(w.gm.Sent()[0].Id); !strings.Contains(string(raw), "Message-ID: "+msgID+"\r\n") {
		t.Fatalf("the email went out without the request's Message-ID %s:\n%s", msgID, raw)
	}

	// Sent cannot be searched for now: the next identical call cannot
	// settle the earlier copy, so it writes a new request, which keeps the
	// earlier Message-ID, and the human approves it again.
	w.gm.Inject(localgmail.Fault{Op: "messages.list", Status: 400, Times: -1})
	var stderr testutil.Buffer
	cs := serveHere(t, w.env, io.MultiWriter(&testWriter{t: t}, &stderr), "serve")
	text, _ := call(t, cs, "send_email", settleArgs)
	if !strings.Contains(text, "may already have been sent") {
		t.Errorf("repeat call while Sent cannot be searched: %q, want the unknown outcome said", text)
	}
	pending := w.files("Pending_Approval")
	if len(pending) != 1 {
		t.Fatalf("pending: %v", pending)
	}
	if got := frontField(w.read("Pending_Approval", pending[0]), "outgoing_message_id"); got != msgID {
		t.Errorf("the new request's Message-ID is %q, want the unsettled copy's %q", got, msgID)
	}
	w.approveAll()
	// The server also settles in the background at its start (settleAtStart):
	// that look into Sent must have met the fault too before it is cleared,
	// or a late one settles the first copy itself and mailgate approvals,
	// below, finds nothing left to settle (1 run in ~15 under load).
	testutil.Eventually(t, 20*time.Second, func() error {
		if !strings.Contains(stderr.String(), "settling interrupted sends") {
			return errors.New("the start's settle has not met the fault yet")
		}
		return nil
	})
	w.gm.ClearFaults()
	text, isErr := call(t, cs, "send_email", settleArgs)
	if isErr || !strings.Contains(text, "already") {
		t.Errorf("re-approved call: %q (error %t), want it told the email was already sent", text, isErr)
	}
	if n := len(w.gm.Sent()); n != 1 {
		t.Fatalf("%d emails in Sent after the re-approval, want 1: delivered twice", n)
	}
	cs.Close()

	// mailgate approvals settles the first copy from Sent.
	out := runApprovals(t, w)
	if !strings.Contains(out, "Settled Done/"+done+": it was sent") {
		t.Errorf("mailgate approvals did not say it settled Done/%s:\n%s", done, out)
	}
	for _, d := range w.files("Done") {
		f := w.read("Done", d)
		if frontStatus(f) != "sent" || frontField(f, "gmail_message_id") != w.gm.Sent()[0].Id {
			t.Errorf("Done/%s is not recorded as sent with Gmail's id %s:\n%s", d, w.gm.Sent()[0].Id, f)
		}
	}
	if log := readAudit(t, w.home); !strings.Contains(log, `"action_type":"gate_settle"`) {
		t.Errorf("no gate_settle audit line:\n%s", log)
	}
}

func TestKilledSendSettledAtStart(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	done := killMidSend(t, w, true)
	cs := w.connectHere() // settles in the background at start
	_ = cs
	testutil.Eventually(t, 20*time.Second, func() error {
		if st := frontStatus(w.read("Done", done)); st != "sent" {
			return fmt.Errorf("Done/%s says %q", done, st)
		}
		return nil
	})
	if f := w.read("Done", done); !strings.Contains(f, "found later in Sent by its Message-ID") {
		t.Errorf("Done/%s does not say how its outcome was learnt:\n%s", done, f)
	}
}

func TestKilledSendNeverDeliveredSettledNotSent(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	done := killMidSend(t, w, false)
	if n := len(w.gm.Sent()); n != 0 {
		t.Fatalf("%d emails in Sent, want none", n)
	}
	// Within the grace it stays open: the send might still be in flight.
	out := runApprovals(t, w)
	if !strings.Contains(out, "still have no known outcome") || frontStatus(w.read("Done", done)) != "pending" {
		t.Errorf("a claim just made was settled before its grace:\n%s", out)
	}
	// An hour later (the claim's time is in the Done file's name).
	old := regexp.MustCompile(`\.\d{8}T\d{6}Z-`).ReplaceAllString(done, "."+time.Now().Add(-time.Hour).UTC().Format("20060102T150405Z")+"-")
	if err := os.Rename(filepath.Join(w.home, "vault", "Done", done), filepath.Join(w.home, "vault", "Done", old)); err != nil {
		t.Fatal(err)
	}
	out = runApprovals(t, w)
	if !strings.Contains(out, "Settled Done/"+old+": it was NOT sent") {
		t.Errorf("mailgate approvals did not say the email was not sent:\n%s", out)
	}
	f := w.read("Done", old)
	if frontStatus(f) != "failed" || !strings.Contains(f, "it was not sent") {
		t.Errorf("Done/%s:\n%s", old, f)
	}
	// The agent's next identical call asks afresh, without the "may have
	// been sent" warning.
	cs := w.connectHere()
	text, _ := call(t, cs, "send_email", settleArgs)
	if strings.Contains(text, "may already have been sent") {
		t.Errorf("after settling as not sent: %q", text)
	}
}

// mountTmpfs mounts a tmpfs of size bytes at a new directory, or skips
// the test where the machine does not allow it (not root, no mount).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); the full-disk path is covered by the gate's injected ENOSPC test", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file into dir until the filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	return path
}

// unfill gives the space fill took back. It truncates before removing: a
// process another test forked while the filler was open holds it until its
// exec, and a removed file's blocks return only when the last holder closes
// it (under load the next write here once failed with ENOSPC); truncation
// frees them at once.
func unfill(t *testing.T, path string) {
	t.Helper()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestFullVaultSendSettledFromAudit: the claim (a rename) succeeds, Gmail
// sends, the Done file cannot be rewritten (ENOSPC); once space returns,
// the next start completes the Done file from the audit log's success
// line. And while the disk is full, no claim is made at all.
func TestFullVaultSendSettledFromAudit(t *testing.T) {
	parallel(t)
	mnt := mountTmpfs(t, 1<<20)
	vault := filepath.Join(mnt, "vault")
	w := newWorld(t, false, "VAULT_PATH="+vault)
	cs := w.connectHere()
	if text, _ := call(t, cs, "send_email", settleArgs); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("first call: %q", text)
	}
	files := func(dir string) []string {
		es, _ := os.ReadDir(filepath.Join(vault, dir))
		var out []string
		for _, e := range es {
			if !strings.HasPrefix(e.Name(), ".") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	p := files("Pending_Approval")
	if len(p) != 1 {
		t.Fatalf("pending: %v", p)
	}
	if err := os.Rename(filepath.Join(vault, "Pending_Approval", p[0]), filepath.Join(vault, "Approved", p[0])); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	w.gm.Inject(localgmail.Fault{Op: "messages.send", Hold: hold})
	answered := make(chan string, 1)
	go func() { text, _ := call(t, cs, "send_email", settleArgs); answered <- text }()
	testutil.Eventually(t, 20*time.Second, func() error {
		if len(files("Done")) != 1 || w.gm.Calls("messages.send") == 0 {
			return errors.New("not claimed and sending yet")
		}
		return nil
	})
	filler := fill(t, mnt) // the disk fills while Gmail works
	close(hold)
	if text := <-answered; !strings.HasPrefix(text, "Email sent successfully") {
		t.Fatalf("send with a full vault: %q", text)
	}
	done := files("Done")[0]
	data, _ := os.ReadFile(filepath.Join(vault, "Done", done))
	if st := frontStatus(string(data)); st != "pending" {
		t.Fatalf("Done/%s says %q: the full disk did not stop its rewrite, so this test shows nothing", done, st)
	}

	// While the disk is full, a new approval is not claimed (nothing sent,
	// nothing consumed): the capacity check before the claim.
	other := map[string]any{"to": "carol@example.com", "subject": "Second", "body": "Another.\n"}
	unfill(t, filler)
	if text, _ := call(t, cs, "send_email", other); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("second request: %q", text)
	}
	for _, n := range files("Pending_Approval") {
		os.Rename(filepath.Join(vault, "Pending_Approval", n), filepath.Join(vault, "Approved", n))
	}
	filler = fill(t, mnt)
	if text, isErr := call(t, cs, "send_email", other); !isErr || !strings.Contains(text, "full") {
		t.Errorf("send with the vault's disk full: %q, want it refused before the claim", text)
	}
	if n := len(w.gm.Sent()); n != 1 || len(files("Approved")) != 1 {
		t.Errorf("after the refused claim: %d in Sent (want 1), Approved/ %v (want the approval kept)", n, files("Approved"))
	}
	cs.Close()

	unfill(t, filler) // space returns; the next start settles
	w.connectHere()
	testutil.Eventually(t, 20*time.Second, func() error {
		data, _ := os.ReadFile(filepath.Join(vault, "Done", done))
		if st := frontStatus(string(data)); st != "sent" {
			return fmt.Errorf("Done/%s still says %q", done, st)
		}
		return nil
	})
	data, _ = os.ReadFile(filepath.Join(vault, "Done", done))
	if f := string(data); frontField(f, "gmail_message_id") != w.gm.Sent()[0].Id || frontField(f, "settled_by") != "audit_log" {
		t.Errorf("Done/%s not completed from the audit log:\n%s", done, f)
	}
}
