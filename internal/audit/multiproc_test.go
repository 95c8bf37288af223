package audit

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// The multi-process tests re-execute this test binary as writers: with
// childEnv set, TestMain appends the requested lines and exits.
const (
	childEnv   = "MAILGATE_AUDIT_CHILD_DIR"
	childLines = "MAILGATE_AUDIT_CHILD_LINES"
	childLong  = "MAILGATE_AUDIT_CHILD_LONG"
)

func TestMain(m *testing.M) { testutil.RunOrChild(m, childEnv, runChild) }

func runChild(dir string) int {
	n, _ := strconv.Atoi(os.Getenv(childLines))
	long := os.Getenv(childLong) == "true"
	l, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer l.Close()
	for i := range n {
		e := Entry{Tool: "send_email", ActionType: "send", Result: ResultSuccess,
			CorrelationID: strconv.Itoa(i), Target: "j***@example.com"}
		if long && i%7 == 0 {
			// Far beyond PIPE_BUF: only the flock keeps these whole.
			e.Target = strings.Repeat("t", 64<<10)
		}
		if err := l.Record(e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// runWriters starts procs copies of the test binary appending lines each to
// dir and returns the elapsed wall time once all have exited.
func runWriters(t *testing.T, dir string, procs, lines int, long bool) time.Duration {
	t.Helper()
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = testutil.ChildCommand(t, childEnv+"="+dir, childLines+"="+strconv.Itoa(lines), childLong+"="+strconv.FormatBool(long))
	}
	start := time.Now()
	testutil.RunChildren(t, cmds...)
	return time.Since(start)
}

func TestMultiProcessAppendNoTornLines(t *testing.T) {
	t.Parallel()
	const procs, lines = 4, 300
	dir := t.TempDir()
	runWriters(t, dir, procs, lines, true)
	if n := countAll(t, dir); n != procs*lines {
		t.Fatalf("lines = %d, want %d", n, procs*lines)
	}
}

// TestAuditThroughput measures lines/s with 4 processes appending at once
// (each line fsynced). It asserts only correctness; run it with -v to read
// the figure. Each process appends 2,000 lines in make test
// (MAILGATE_TEST_FULL), 200 in a plain go test or with -short;
// MAILGATE_AUDIT_THROUGHPUT_LINES overrides that.
func TestAuditThroughput(t *testing.T) {
	t.Parallel()
	const procs = 4
	lines := testutil.Size(200, 2000)
	if testing.Short() {
		lines = 200
	}
	if s := os.Getenv("MAILGATE_AUDIT_THROUGHPUT_LINES"); s != "" {
		lines, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	elapsed := runWriters(t, dir, procs, lines, false)
	total := procs * lines
	if n := countAll(t, dir); n != total {
		t.Fatalf("lines = %d, want %d", n, total)
	}
	t.Logf("audit throughput: %d processes, %d lines in %v = %.0f lines/s (every line fsynced, none torn)",
		procs, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
}

func BenchmarkAuditAppend(b *testing.B) {
	l, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Tool: "send_email", ActionType: "send", Result: ResultSuccess, CorrelationID: "0123456789ab",
		Target: "j***@example.com", ApprovalFile: "EMAIL_SEND_0123456789ab.md",
		ApprovalSHA256: strings.Repeat("a", 64), GmailMessageID: "18d5a", GmailThreadID: "18d5a"}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Record(e); err != nil {
			b.Fatal(err)
		}
	}
}
