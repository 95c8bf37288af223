package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// openLog opens a log in a fresh folder, closed when the test ends.
func openLog(t *testing.T) (string, *Log) {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(dir)
	return dir, testutil.Closing(t, l, err)
}

func TestRecordWritesOneLinePerEntry(t *testing.T) {
	t.Parallel()
	dir, l := openLog(t)
	day := time.Date(2026, 2, 14, 23, 59, 0, 0, time.UTC)
	want := Entry{
		Time: day, CorrelationID: "c1", Tool: "send_email", ActionType: "claim",
		Result: ResultPending, Target: MaskAddress("john@example.com"),
		ApprovalFile: "EMAIL_SEND_x.md", ApprovalSHA256: "ab", DurationMS: 3,
	}
	if err := l.Record(want); err != nil {
		t.Fatal(err)
	}
	next := want
	next.Time = day.Add(2 * time.Minute) // next UTC day: a new file
	next.Detail = strings.Repeat("x", 2*MaxDetail)
	if err := l.Record(next); err != nil {
		t.Fatal(err)
	}

	got := readLines(t, filepath.Join(dir, "2026-02-14.jsonl"))
	if len(got) != 1 {
		t.Fatalf("lines on day 1 = %d, want 1", len(got))
	}
	want.PID = os.Getpid()
	if got[0] != want {
		t.Errorf("entry = %+v\nwant    %+v", got[0], want)
	}
	got2 := readLines(t, filepath.Join(dir, "2026-02-15.jsonl"))
	if len(got2) != 1 {
		t.Fatalf("lines on day 2 = %d, want 1", len(got2))
	}
	if n := len(got2[0].Detail); n > MaxDetail+len("…") {
		t.Errorf("detail not truncated: %d bytes", n)
	}
	fi, err := os.Stat(filepath.Join(dir, "2026-02-15.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode = %v, want 0600", perm)
	}
}

func TestRecordAfterCloseAndNilLog(t *testing.T) {
	t.Parallel()
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(Entry{Tool: "t"}); err != nil {
		t.Fatalf("record after close: %v", err)
	}
	l.Close()
	var nilLog *Log
	if err := nilLog.Record(Entry{}); err != nil {
		t.Fatalf("nil log: %v", err)
	}
}

func TestOpenRefusesRelativeDir(t *testing.T) {
	t.Parallel()
	if _, err := Open("audit"); err == nil {
		t.Fatal("relative dir accepted")
	}
}

func TestMaskAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"john@example.com", "j***@example.com"},
		{"John Doe <john@Example.COM>", "j***@example.com"},
		{"  j@x.io ", "j***@x.io"},
		{"élodie@exemple.fr", "é***@exemple.fr"},
		{"not-an-email", "***"},
		{"", "***"},
		{"a@b.c, evil@x.com", "***"},
		{"@example.com", "***"},
	} {
		if got := MaskAddress(tc.in); got != tc.want {
			t.Errorf("MaskAddress(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCorrelationID(t *testing.T) {
	t.Parallel()
	a, b := NewCorrelationID(), NewCorrelationID()
	if len(a) != 12 || a == b {
		t.Fatalf("ids %q %q", a, b)
	}
	ctx := WithCorrelationID(context.Background(), a)
	if got := CorrelationID(ctx); got != a {
		t.Fatalf("CorrelationID = %q", got)
	}
	if got := CorrelationID(context.Background()); got != "" {
		t.Fatalf("empty ctx gave %q", got)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	dir, l := openLog(t)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Record(Entry{Tool: "t", CorrelationID: fmt.Sprintf("%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := countAll(t, dir); n != workers*each {
		t.Fatalf("lines = %d, want %d", n, workers*each)
	}
}

func readLines(t *testing.T, path string) []Entry {
	t.Helper()
	out, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// countAll parses every line of every file in dir and fails on any line that
// is not one whole JSON object.
func countAll(t *testing.T, dir string) int {
	t.Helper()
	out, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(out)
}

func TestRecordMasksAddressesInDetail(t *testing.T) {
	t.Parallel()
	dir, l := openLog(t)
	day := time.Date(2026, 2, 14, 1, 0, 0, 0, time.UTC)
	if err := l.Record(Entry{Time: day, Detail: `400 Invalid To header "john.doe@example.com", cc <ann@sub.example.org>`}); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, filepath.Join(dir, "2026-02-14.jsonl"))[0].Detail
	if want := `400 Invalid To header "j***@example.com", cc <a***@sub.example.org>`; got != want {
		t.Fatalf("detail = %q, want %q", got, want)
	}
}

// TestTornLineStaysAlone: a prefix of a line left by a writer killed in the
// middle of its write does not swallow the next entry: Record ends it first,
// and ReadFile returns every whole entry and names the torn line.
func TestTornLineStaysAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	first := Entry{Time: now, ActionType: "first", Result: "ok"}
	if err := l.Record(first); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "2026-11-25.jsonl")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"timestamp":"2026-11-25T12:00:01Z","action_ty`) // the killed writer's prefix
	f.Close()
	if err := l.Record(Entry{Time: now, ActionType: "second", Result: "ok"}); err != nil {
		t.Fatal(err)
	}
	es, err := ReadFile(path)
	var torn *TornError
	if !errors.As(err, &torn) || !slices.Equal(torn.Lines, []int{2}) {
		t.Fatalf("err = %v, want line 2 named as torn", err)
	}
	if len(es) != 2 || es[0].ActionType != "first" || es[1].ActionType != "second" {
		t.Fatalf("entries %+v, want first and second", es)
	}
}
