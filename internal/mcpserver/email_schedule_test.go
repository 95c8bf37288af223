package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/schedule"
)

// fakeClock is the servers' one clock, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// laterServer is one mailgate server of a send-later test: its own store
// connection, vault handle, gate and sender of due emails.
type laterServer struct {
	*emailEnv
	later *gate.Later
	sched *schedule.Store
}

// laterServers starts n servers over one Gmail, one store (SQLite, or
// PostgreSQL under MAILGATE_TEST_POSTGRES) and one vault, on one fake clock.
func laterServers(t *testing.T, n int, grace time.Duration) ([]*laterServer, *fakeClock, *localgmail.Server) {
	t.Helper()
	gm := localgmail.New(localgmail.Options{Email: "me@example.com"})
	seed(t, gm)
	base, _ := gmailschema.Serve(t, gm)
	gm.SetBaseURL(base)
	dsn, dir := emailDSN(t), t.TempDir()
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Second)}
	var out []*laterServer
	for i := range n {
		e := newEmailEnvAt(t, gm, false, nil, dsn, dir)
		st, err := schedule.New(context.Background(), e.db)
		if err != nil {
			t.Fatal(err)
		}
		g := e.deps.Gate
		g.Scheduler, g.Now, g.LateGrace = st, clock.Now, grace
		out = append(out, &laterServer{emailEnv: e, sched: st, later: &gate.Later{
			Store: st, Vault: g.Vault, Limiter: g.Limiter, Audit: e.deps.Audit, Grace: grace, Now: clock.Now, Owner: fmt.Sprintf("server-%d", i),
			Send: LaterSend(e.deps.Gmail)}})
	}
	return out, clock, gm
}

// runDueTogether runs every server's pass at once and returns how many
// emails they sent in all.
func runDueTogether(t *testing.T, servers []*laterServer) int {
	t.Helper()
	var wg sync.WaitGroup
	counts := make([]int, len(servers))
	errs := make([]error, len(servers))
	for i, s := range servers {
		wg.Go(func() { counts[i], errs[i] = s.later.RunDue(context.Background()) })
	}
	wg.Wait()
	total := 0
	for i := range servers {
		if errs[i] != nil {
			t.Fatalf("server %d: %v", i, errs[i])
		}
		total += counts[i]
	}
	return total
}

func doneStatus(t *testing.T, vault string) map[string]string {
	t.Helper()
	out := map[string]string{}
	names, _ := filepath.Glob(filepath.Join(vault, "Done", "*.md"))
	for _, n := range names {
		b, _ := os.ReadFile(n)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "status: ") {
				out[filepath.Base(n)] = strings.TrimPrefix(l, "status: ")
			}
		}
	}
	return out
}

// TestSendLaterOnceAcrossServers: through the real protocol, an email with
// send_at is approved with its time, kept when the agent calls again, not
// sent before its time by any of three servers running their passes at
// once, then sent exactly once by one of them at its time, and never again.
// On SQLite by default, on PostgreSQL under MAILGATE_TEST_POSTGRES.
func TestSendLaterOnceAcrossServers(t *testing.T) {
	servers, clock, gm := laterServers(t, 3, time.Hour)
	e := servers[0]
	start := clock.Now()
	at := start.Add(2 * time.Hour)
	args := map[string]any{"to": "alice@example.com", "subject": "Later", "body": "Sent at its time.\n", "send_at": at.Format(time.RFC3339)}
	text, file := request(t, e.emailEnv, "send_email", args)
	mustContain(t, "answer", text, "Send at: "+at.Format(time.RFC3339)+" (UTC)")
	body := readVault(t, e.emailEnv, "Pending_Approval", file)
	mustContain(t, "request file", body, "send_at: "+at.Format(time.RFC3339)+"\n", "**Scheduled: sent at "+at.Format(time.RFC3339)+" (UTC)**")
	approve(t, e.vault, file)

	// Another server takes the agent's call: scheduled, nothing sent.
	text, isErr := callTool(t, servers[1].cs, "send_email", args)
	if isErr || !strings.HasPrefix(text, "Approved and scheduled: this email will be sent once at "+at.Format(time.RFC3339)) {
		t.Fatalf("the approved call: (isError=%v) %q", isErr, text)
	}
	st := doneStatus(t, e.vault)
	if len(st) != 1 || len(gm.Sent()) != 0 {
		t.Fatalf("after scheduling: Done %v, %d sent", st, len(gm.Sent()))
	}
	for _, s := range st {
		if s != "scheduled" {
			t.Fatalf("Done file status %q, want scheduled", s)
		}
	}
	if p, err := e.sched.Pending(context.Background()); err != nil || len(p) != 1 || !p[0].SendAt.Equal(at) {
		t.Fatalf("pending: %v, %v", p, err)
	}

	// Called again while it waits: told it is scheduled; the new request
	// says approving it would send a second copy.
	text, _ = callTool(t, servers[2].cs, "send_email", args)
	mustContain(t, "call while scheduled", text, "This exact email is already approved and scheduled")

	for _, now := range []time.Time{start, start.Add(time.Hour), at.Add(-time.Second)} {
		clock.Set(now)
		if n := runDueTogether(t, servers); n != 0 || len(gm.Sent()) != 0 {
			t.Fatalf("at %s, before its time: %d sent by the passes, %d in Sent", now, n, len(gm.Sent()))
		}
	}
	clock.Set(at.Add(time.Second))
	if n := runDueTogether(t, servers); n != 1 {
		t.Fatalf("at its time the three servers sent %d emails, want exactly 1", n)
	}
	for range 3 {
		clock.Set(clock.Now().Add(10 * time.Minute))
		if n := runDueTogether(t, servers); n != 0 {
			t.Fatalf("a later pass sent %d more", n)
		}
	}
	if len(gm.Sent()) != 1 {
		t.Fatalf("Gmail sent %d messages, want 1", len(gm.Sent()))
	}
	m, _ := delivered(t, e.emailEnv)
	if m.Header.Get("Subject") != "Later" {
		t.Fatalf("sent %v", m.Header)
	}
	for _, s := range doneStatus(t, e.vault) {
		if s != "sent" {
			t.Fatalf("Done file status %q after the send, want sent", s)
		}
	}
	// The agent's identical call now writes a request marked as a repeat:
	// nothing is sent by it.
	if text, isErr := callTool(t, e.cs, "send_email", args); !isErr || len(gm.Sent()) != 1 {
		t.Fatalf("call after the send: (isError=%v) %q", isErr, text)
	}
}

// TestSendLaterPastGraceAndCancel: an email whose time passed more than the
// grace ago while no server ran is never sent and is moved to Rejected/
// with the reason; one within the grace is sent; one withdrawn with Cancel
// is never sent.
func TestSendLaterPastGraceAndCancel(t *testing.T) {
	servers, clock, gm := laterServers(t, 1, time.Hour)
	e := servers[0]
	start := clock.Now()
	schedule := func(subject string, at time.Time) string {
		args := map[string]any{"to": "alice@example.com", "subject": subject, "body": "x\n", "send_at": at.Format(time.RFC3339)}
		_, file := request(t, e.emailEnv, "send_email", args)
		approve(t, e.vault, file)
		text, isErr := callTool(t, e.cs, "send_email", args)
		if isErr || !strings.HasPrefix(text, "Approved and scheduled") {
			t.Fatalf("%s: (isError=%v) %q", subject, isErr, text)
		}
		return strings.TrimSuffix(strings.Fields(text[strings.Index(text, "approvals cancel ")+len("approvals cancel "):])[0], "")
	}
	schedule("Too late", start.Add(time.Hour))
	schedule("Late but in grace", start.Add(2*time.Hour))
	cancelID := schedule("Withdrawn", start.Add(2*time.Hour))

	rejected, err := e.sched.Cancel(context.Background(), e.deps.Gate.Vault, cancelID+".md", "test", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sched.Cancel(context.Background(), e.deps.Gate.Vault, cancelID+".md", "test", clock.Now()); err == nil {
		t.Fatal("cancelled twice")
	}
	b := readVault(t, e.emailEnv, "Rejected", rejected)
	mustContain(t, "cancelled file", b, "status: rejected", "withdrawn with mailgate approvals cancel")

	// No server ran from start until 2h30 later.
	clock.Set(start.Add(2*time.Hour + 30*time.Minute))
	if n := runDueTogether(t, servers); n != 1 {
		t.Fatalf("sent %d, want 1 (the one within the grace)", n)
	}
	if len(gm.Sent()) != 1 {
		t.Fatalf("%d sent", len(gm.Sent()))
	}
	m, _ := delivered(t, e.emailEnv)
	if got := m.Header.Get("Subject"); got != "Late but in grace" {
		t.Fatalf("sent %q", got)
	}
	names, _ := filepath.Glob(filepath.Join(e.vault, "Rejected", "*.md"))
	var reasons []string
	for _, n := range names {
		b, _ := os.ReadFile(n)
		reasons = append(reasons, string(b))
	}
	joined := strings.Join(reasons, "\n")
	if len(names) != 2 || !strings.Contains(joined, "passed 1h30m0s ago while no mailgate server ran, more than the grace of 1h0m0s") {
		t.Fatalf("Rejected/ holds %d files:\n%s", len(names), joined)
	}
	if p, _ := e.sched.Pending(context.Background()); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}

// TestSendLaterBindsTheTime: the time is part of the approval: the same
// email at another time is another request, a send_at in the past is
// refused, and an approval whose time the human changed is refused.
func TestSendLaterBindsTheTime(t *testing.T) {
	servers, clock, gm := laterServers(t, 1, time.Hour)
	e := servers[0]
	at := clock.Now().Add(3 * time.Hour)
	args := map[string]any{"to": "alice@example.com", "subject": "Time", "body": "x\n", "send_at": at.Format(time.RFC3339)}
	_, file := request(t, e.emailEnv, "send_email", args)
	other := map[string]any{"to": "alice@example.com", "subject": "Time", "body": "x\n", "send_at": at.Add(time.Hour).Format(time.RFC3339)}
	if _, f2 := request(t, e.emailEnv, "send_email", other); f2 == file {
		t.Fatal("another time reuses the request")
	}
	for _, bad := range []string{clock.Now().Add(-time.Minute).Format(time.RFC3339), "tomorrow 9am", clock.Now().Add(400 * 24 * time.Hour).Format(time.RFC3339)} {
		a := map[string]any{"to": "alice@example.com", "subject": "Time", "body": "x\n", "send_at": bad}
		if text, isErr := callTool(t, e.cs, "send_email", a); !isErr || !strings.Contains(text, "Invalid send_at") {
			t.Errorf("send_at %q: (isError=%v) %q", bad, isErr, text)
		}
	}
	path := filepath.Join(e.vault, "Pending_Approval", file)
	data, _ := os.ReadFile(path)
	earlier := at.Add(-2 * time.Hour).Format(time.RFC3339)
	os.WriteFile(path, []byte(strings.Replace(string(data), "send_at: "+at.Format(time.RFC3339), "send_at: "+earlier, 1)), 0o600)
	approve(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.Contains(text, "an approval cannot change when an email is sent") || len(gm.Sent()) != 0 {
		t.Fatalf("changed time: (isError=%v) %q", isErr, text)
	}
}
