package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/mail"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// These tests run the built binary as several processes on one vault, one
// store and one local Gmail server: the guarantees of the approval gate must
// hold between processes, not only between goroutines.

func sendArgs(i int) map[string]any {
	return map[string]any{"to": "carol@example.com", "subject": fmt.Sprintf("Report %03d", i), "body": fmt.Sprintf("Report number %d.\n", i)}
}

// prepareApprovals has one server request n distinct sends, and approves
// every request as the human would (in batches: at most 20 requests to one
// recipient wait at once). The tests' own processes come after: the
// server here is in-process (connectHere), it only writes the requests.
func (w *world) prepareApprovals(n int) {
	w.t.Helper()
	cs := w.connectHere()
	approved := 0
	for i := 0; i < n; i++ {
		if text, _ := call(w.t, cs, "send_email", sendArgs(i)); !strings.HasPrefix(text, "Rejected: No matching approval") {
			w.t.Fatalf("request %d: %q", i, text)
		}
		if (i+1)%20 == 0 || i == n-1 {
			approved += w.approveAll()
		}
	}
	cs.Close()
	if approved != n {
		w.t.Fatalf("approved %d requests, want %d", approved, n)
	}
}

func TestGateSixProcessesRaceForOneApproval(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	w.prepareApprovals(1)
	sessions := make([]*mcp.ClientSession, 6)
	for i := range sessions {
		sessions[i] = w.connect()
	}
	texts := make([]string, len(sessions))
	testutil.Race(len(sessions), func(i int) { texts[i], _ = call(t, sessions[i], "send_email", sendArgs(0)) })
	sentAnswers := 0
	for _, text := range texts {
		if strings.HasPrefix(text, "Email sent successfully.") {
			sentAnswers++
		} else if !strings.HasPrefix(text, "Rejected:") {
			t.Errorf("unexpected answer %q", text)
		}
	}
	if sentAnswers != 1 || len(w.gm.Sent()) != 1 || w.gm.Calls("messages.send") != 1 {
		t.Fatalf("%d processes said sent, Gmail got %d sends (%d requests); want exactly one\n%s",
			sentAnswers, len(w.gm.Sent()), w.gm.Calls("messages.send"), strings.Join(texts, "\n"))
	}
}

var nextSendRe = regexp.MustCompile(`^Rejected: Rate limit exceeded \(10 emails/hour\)\. Next send available in (\d+) minutes\.`)

func TestGateLimitAcrossProcessesAndRestarts(t *testing.T) {
	parallelLong(t, 1)
	w := newWorld(t, false, "SEND_LIMIT_PER_HOUR=10")
	w.prepareApprovals(30)
	var mu sync.Mutex
	var sent, limited int
	var wg sync.WaitGroup
	for p := 0; p < 3; p++ {
		cs := w.connect()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := p; i < 30; i += 3 {
				text, _ := call(t, cs, "send_email", sendArgs(i))
				mu.Lock()
				switch {
				case strings.HasPrefix(text, "Email sent successfully."):
					sent++
				case nextSendRe.MatchString(text):
					if m := nextSendRe.FindStringSubmatch(text); m[1] != "60" && m[1] != "59" {
						t.Errorf("next send in %s minutes, want about 60", m[1])
					}
					limited++
				default:
					t.Errorf("unexpected answer %q", text)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if sent != 10 || limited != 20 || len(w.gm.Sent()) != 10 {
		t.Fatalf("sent %d (Gmail %d), limited %d; want 10 and 20", sent, len(w.gm.Sent()), limited)
	}
	if n := len(w.files("Approved")); n != 20 {
		t.Fatalf("rate-limited approvals must stay in Approved/: %d there", n)
	}
	// A fresh process (a restart) still sees the ten sends of the last hour.
	cs := w.connect()
	for i := 0; i < 30; i++ {
		text, _ := call(t, cs, "send_email", sendArgs(i))
		if strings.HasPrefix(text, "Email sent successfully.") {
			t.Fatalf("send %d went through after a restart: the limit forgot", i)
		}
	}
	if len(w.gm.Sent()) != 10 {
		t.Fatalf("Gmail got %d sends", len(w.gm.Sent()))
	}
}

// TestGateSIGKILLDuringSends kills a process with SIGKILL at a random moment
// of an approved send, 50 times in make test (MAILGATE_TEST_FULL), 12 in a
// plain go test, then checks that nothing was sent twice, no consumed
// approval can be used again, and every claimed attempt is in the audit log.
func TestGateSIGKILLDuringSends(t *testing.T) {
	parallelLong(t, 2)
	if testing.Short() {
		t.Skip("spawns 100+ processes")
	}
	rounds := testutil.Size(12, 50)
	w := newWorld(t, false, "SEND_LIMIT_PER_HOUR=1000")
	w.prepareApprovals(rounds)
	w.gm.SetLatency(30 * time.Millisecond) // widen the window in which a kill lands mid-send
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for i := 0; i < rounds; i++ {
		cmd := exec.Command(builtBinary(t), "serve")
		cmd.Dir = "/"
		cmd.Env = w.env
		c := mcp.NewClient(&mcp.Implementation{Name: "victim", Version: "0"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_email", Arguments: sendArgs(i)})
		// The call spends a few ms in the gate and 30 ms in Gmail: a kill
		// within 45 ms lands before the claim, during the send, or after it.
		time.Sleep(time.Duration(rng.IntN(45_000)) * time.Microsecond)
		cmd.Process.Kill()
		cs.Close() // waits for the killed process (the transport owns cmd.Wait)
	}
	// A request a killed process had already delivered is still in the
	// server's injected latency: let those finish before counting what
	// reached Gmail. (Settling only; nothing is timed.)
	time.Sleep(200 * time.Millisecond)
	w.gm.SetLatency(0)

	// No approval is both still usable and consumed. Done/ names are the
	// request's stem plus a unique suffix.
	consumed := w.files("Done")
	for _, name := range w.files("Approved") {
		for _, d := range consumed {
			if strings.HasPrefix(d, stem(name)) {
				t.Errorf("%s is in both Approved/ and Done/ (%s)", name, d)
			}
		}
	}
	auditLog := readAudit(t, w.home)
	for _, name := range consumed {
		if !strings.Contains(auditLog, stem(name)) {
			t.Errorf("claimed approval %s has no audit line", name)
		}
	}
	sentBefore := len(w.gm.Sent())

	// Every round again, from a healthy process: what was consumed is refused,
	// what was never claimed is sent now.
	cs := w.connect()
	for i := 0; i < rounds; i++ {
		call(t, cs, "send_email", sendArgs(i))
	}
	subjects := map[string]int{}
	for _, m := range w.gm.Sent() {
		raw, _ := w.gm.RawMessage(m.Id)
		msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatal(err)
		}
		subjects[msg.Header.Get("Subject")]++
	}
	for s, n := range subjects {
		if n > 1 {
			t.Errorf("%q was sent %d times", s, n)
		}
	}
	if got, want := len(w.gm.Sent())-sentBefore, rounds-len(consumed); got != want {
		t.Errorf("after the kills, %d approvals were left unclaimed but %d were sent", want, got)
	}
	t.Logf("%d rounds: %d approvals claimed by killed processes (%d of them reached Gmail), %d sent afterwards",
		rounds, len(consumed), sentBefore, len(w.gm.Sent())-sentBefore)
}

// stem is a vault file's name up to its first dot: the request's identity.
func stem(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}
