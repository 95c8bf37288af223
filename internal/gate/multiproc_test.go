package gate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/testutil"
)

// The tests in this file run the gate in several processes at once: TestMain
// re-executes the test binary as a child when childEnv is set. A child opens
// its own store connection, vault and audit log on the shared directory,
// prints "ready", waits for the go file (so children start together), then
// submits its requests and prints "<index> <status> <retry minutes>" for
// each. Its SendFunc appends "begin <index>" and "sent <index>" to a shared
// journal, fsynced, so the parent can count Gmail calls across processes and
// across SIGKILLs.
const (
	childEnv     = "MAILGATE_GATE_CHILD_DIR"
	childLimit   = "MAILGATE_GATE_CHILD_LIMIT"
	childNow     = "MAILGATE_GATE_CHILD_NOW" // RFC 3339; empty: wall clock
	childReqs    = "MAILGATE_GATE_CHILD_REQS"
	childShuffle = "MAILGATE_GATE_CHILD_SHUFFLE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		if err := runChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testutil.Main(m)
}

// numbered is the i-th distinct test email.
func numbered(i int) approval.Request {
	return approval.Request{Kind: approval.KindSend, To: fmt.Sprintf("user%d@example.com", i),
		Subject: fmt.Sprintf("Report %d", i), Body: fmt.Sprintf("Report number %d.\n", i)}
}

func runChild(dir string) error {
	limit, _ := strconv.Atoi(os.Getenv(childLimit))
	now := time.Now
	if s := os.Getenv(childNow); s != "" {
		fixed, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return err
		}
		now = func() time.Time { return fixed }
	}
	g, closeFn, err := openGate(dir, limit, approval.ModeContent, false, now)
	if err != nil {
		return err
	}
	defer closeFn()
	var idx []int
	for _, s := range strings.Split(os.Getenv(childReqs), ",") {
		i, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		idx = append(idx, i)
	}
	if os.Getenv(childShuffle) != "" {
		rand.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	}
	journal, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer journal.Close()
	note := func(s string) error {
		if _, err := journal.WriteString(s + "\n"); err != nil {
			return err
		}
		return journal.Sync()
	}
	fmt.Println("ready")
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, i := range idx {
		out := g.Submit(context.Background(), "send_email", numbered(i), func(context.Context) (SendResult, error) {
			if err := note(fmt.Sprintf("begin %d", i)); err != nil {
				return SendResult{}, err
			}
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond) // Gmail's latency
			if err := note(fmt.Sprintf("sent %d", i)); err != nil {
				return SendResult{}, err
			}
			return SendResult{MessageID: fmt.Sprintf("m%d", i), ThreadID: fmt.Sprintf("t%d", i)}, nil
		})
		if out.Status == Failed {
			return fmt.Errorf("request %d: %v", i, out.Err)
		}
		fmt.Printf("%d %s %d\n", i, out.Status, int(out.RetryAfter.Round(time.Minute).Minutes()))
	}
	return nil
}

// child is a started child process.
type child struct {
	cmd *exec.Cmd
	out *bufio.Reader
	buf strings.Builder
}

func startChild(t *testing.T, dir string, limit int, now string, reqs []int, shuffle bool) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := make([]string, len(reqs))
	for i, r := range reqs {
		s[i] = strconv.Itoa(r)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childLimit+"="+strconv.Itoa(limit),
		childNow+"="+now, childReqs+"="+strings.Join(s, ","))
	if shuffle {
		cmd.Env = append(cmd.Env, childShuffle+"=1")
	}
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, out: bufio.NewReader(pipe)}
	if line, err := c.out.ReadString('\n'); err != nil || line != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child not ready: %q %v", line, err)
	}
	return c
}

// results waits for the child and returns its "<index> <status> <minutes>"
// lines.
func (c *child) results(t *testing.T) [][3]string {
	t.Helper()
	rest, _ := io.ReadAll(c.out)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	var out [][3]string
	for _, l := range strings.Split(strings.TrimSpace(string(rest)), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 {
			out = append(out, [3]string{f[0], f[1], f[2]})
		}
	}
	return out
}

func release(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func journalCounts(t *testing.T, dir string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "journal"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			n[l]++
		}
	}
	return n
}

func TestProcessesRaceForOneApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 10)
	e.approve(t, e.gate(t, false), numbered(0))
	var kids []*child
	for range 6 {
		kids = append(kids, startChild(t, e.dir, 10, t0.Format(time.RFC3339), []int{0}, false))
	}
	release(t, e.dir)
	statuses := map[string]int{}
	for _, k := range kids {
		for _, r := range k.results(t) {
			statuses[r[1]]++
		}
	}
	j := journalCounts(t, e.dir)
	if j["begin 0"] != 1 || statuses["sent"] != 1 {
		t.Fatalf("Gmail calls %d, statuses %v; want exactly one send", j["begin 0"], statuses)
	}
	t.Logf("6 processes, one approval: %v", statuses)
}

func TestLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	const procs, perProc, limit = 3, 10, 10
	e := newEnv(t, limit)
	g := e.gate(t, false)
	for i := range procs * perProc {
		e.approve(t, g, numbered(i))
	}
	var kids []*child
	for p := range procs {
		var reqs []int
		for i := p; i < procs*perProc; i += procs {
			reqs = append(reqs, i)
		}
		kids = append(kids, startChild(t, e.dir, limit, t0.Format(time.RFC3339), reqs, false))
	}
	release(t, e.dir)
	sent, limited := 0, 0
	for _, k := range kids {
		for _, r := range k.results(t) {
			switch r[1] {
			case "sent":
				sent++
			case "rate_limited":
				limited++
				if r[2] != "60" {
					t.Errorf("request %s told to retry in %s minutes, want 60", r[0], r[2])
				}
			default:
				t.Errorf("request %s: %s", r[0], r[1])
			}
		}
	}
	begun := 0
	for k, n := range journalCounts(t, e.dir) {
		if strings.HasPrefix(k, "begin ") {
			begun += n
		}
	}
	if sent != limit || limited != procs*perProc-limit || begun != limit {
		t.Fatalf("sent %d, rate limited %d, Gmail calls %d; want %d, %d, %d", sent, limited, begun, limit, procs*perProc-limit, limit)
	}
	if n := len(e.names(t, approval.DirApproved)); n != procs*perProc-limit {
		t.Fatalf("%d approvals left in Approved/, want %d", n, procs*perProc-limit)
	}
}

func TestLimitHoldsAfterRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	g := e.gate(t, false)
	for i := range 4 {
		e.approve(t, g, numbered(i))
	}
	run := func(now time.Time, reqs ...int) [][3]string {
		k := startChild(t, e.dir, 3, now.Format(time.RFC3339), reqs, false)
		release(t, e.dir)
		return k.results(t)
	}
	if r := run(t0, 0, 1, 2); len(r) != 3 || r[0][1]+r[1][1]+r[2][1] != "sentsentsent" {
		t.Fatalf("first process: %v", r)
	}
	if r := run(t0.Add(20*time.Minute), 3); len(r) != 1 || r[0][1] != "rate_limited" || r[0][2] != "40" {
		t.Fatalf("after restart: %v, want rate limited for 40 minutes", r)
	}
	if r := run(t0.Add(61*time.Minute), 3); len(r) != 1 || r[0][1] != "sent" {
		t.Fatalf("after the window: %v", r)
	}
}

// TestSIGKILLNeverDuplicates kills a sending process at random moments, 50
// times in make test (MAILGATE_TEST_FULL), 12 in a plain go test, over one
// vault and store. Whatever step the kill interrupts, no
// email is sent twice, no consumed approval can be found again, and every
// Gmail call has its audit "claim" line.
func TestSIGKILLNeverDuplicates(t *testing.T) {
	t.Parallel()
	const n = 80
	rounds := testutil.Size(12, 50)
	e := newEnv(t, 1000)
	e.Set(time.Now()) // the children run on the wall clock
	g := e.gate(t, false)
	all := make([]int, n)
	for i := range all {
		all[i] = i
		e.approve(t, g, numbered(i))
	}
	for range rounds {
		k := startChild(t, e.dir, 1000, "", all, true)
		release(t, e.dir)
		time.Sleep(time.Duration(rand.IntN(25000)) * time.Microsecond)
		k.cmd.Process.Signal(syscall.SIGKILL)
		io.Copy(io.Discard, k.out)
		k.cmd.Wait()
	}
	// One last, uninterrupted run finishes whatever is still approved.
	last := startChild(t, e.dir, 1000, "", all, false)
	release(t, e.dir)
	last.results(t)
	e.Set(time.Now())

	j := journalCounts(t, e.dir)
	claims := map[string]bool{}
	for _, l := range auditLines(t, e.auditDir()) {
		if l.ActionType == ActionClaim && l.Result == "pending" {
			stem := strings.TrimSuffix(strings.TrimPrefix(l.ApprovalFile, "Approved/"), ".md")
			claims[stem[strings.LastIndexByte(stem, '_')+1:]] = true // the request's id
		}
	}
	begun, sent := 0, 0
	for i := range n {
		req := numbered(i)
		b := j[fmt.Sprintf("begin %d", i)]
		if b > 1 {
			t.Errorf("request %d: %d Gmail calls", i, b)
		}
		begun += b
		sent += j[fmt.Sprintf("sent %d", i)]
		if b == 1 && !claims[req.SHA256()[:32]] {
			t.Errorf("request %d: Gmail called without an audit claim line", i)
		}
		if a, err := g.Vault.Find(context.Background(), req); err == nil {
			t.Errorf("request %d: approval %s still usable after all runs", i, a.Name)
		}
	}
	statuses := map[string]int{}
	for _, name := range e.names(t, approval.DirDone) {
		body := e.file(t, approval.DirDone, name)
		i := strings.Index(body, "\nstatus: ")
		if i < 0 {
			t.Fatalf("Done/%s has no status:\n%s", name, body)
		}
		statuses[strings.SplitN(body[i+9:], "\n", 2)[0]]++
	}
	if begun < 10 {
		t.Errorf("only %d of %d requests reached Gmail: the test is not exercising sends", begun, n)
	}
	t.Logf("%d kills: %d Gmail calls begun, %d completed, Done statuses %v", rounds, begun, sent, statuses)
}
