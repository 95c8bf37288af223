package approval

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// childDecide names the variable that makes the test binary a decider that
// dies midway (decideChild).
const childDecide = "MAILGATE_TEST_DECIDE_CHILD"

func TestMain(m *testing.M) { testutil.RunOrChild(m, childDecide, decideChild) }

// decideChild decides one request ("root|name|approve or reject|state")
// and kills itself (exit 7, no deferred function, nothing flushed) right
// after the decision reaches state.
func decideChild(arg string) int {
	f := strings.Split(arg, "|")
	v, err := Open(f[0], Options{Now: func() time.Time { return t0 }})
	if err != nil {
		return 2
	}
	decideStep = func(state string) {
		if state == f[3] {
			os.Exit(7)
		}
	}
	d := Decision{Via: ViaPage, From: DirPending, Reason: "not this one"}
	body := "Corrected body.\n"
	if f[2] == "approve" {
		d.Body = &body
		_, err = v.ApproveAs(f[1], d)
	} else {
		_, err = v.RejectAs(f[1], d)
	}
	if err != nil {
		return 3
	}
	return 0
}

// TestDecisionKilledMidwayIsRecovered: a decider killed between taking a
// request and moving it leaves it hidden; the next sweep puts an unmarked
// request back in Pending_Approval/ undecided, and finishes a marked one
// (into Approved/ with the correction, or Rejected/ with the reason). A
// hold young enough to be a live decision is left alone.
func TestDecisionKilledMidwayIsRecovered(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		verb, state string
		folder      string // where the request is after the sweep
		status      string
	}{
		{"approve", holdHeld, DirPending, StatusPending},
		{"reject", holdHeld, DirPending, StatusPending},
		{"approve", DirApproved, DirApproved, StatusApproved},
		{"reject", DirRejected, DirRejected, StatusRejected},
	} {
		t.Run(c.verb+" killed at "+c.state, func(t *testing.T) {
			t.Parallel()
			v, clock := newVault(t, Options{})
			name := pending(t, v, sendReq())
			cmd := testutil.ChildCommand(t, childDecide+"="+strings.Join([]string{v.Root(), name, c.verb, c.state}, "|"))
			var ee *exec.ExitError
			if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Fatalf("the decider did not die at %s: %v", c.state, err)
			}
			// The request is nowhere a reader looks.
			for _, d := range []string{DirPending, DirApproved, DirRejected} {
				if names := visible(t, v, d); len(names) > 0 {
					t.Fatalf("%s/ holds %v while the decision is held", d, names)
				}
			}
			if _, err := v.Resolve(name); err == nil {
				t.Fatal("a held request resolves")
			}
			// Too young to be a dead decision's: left alone (the child's clock is t0).
			if n, err := v.SweepTemp(time.Hour); err != nil || n != 0 {
				t.Fatalf("sweep of a fresh hold: %d, %v", n, err)
			}
			clock.Advance(maxDecision + time.Second)
			if n, err := v.SweepTemp(time.Hour); err != nil || n != 1 {
				t.Fatalf("sweep: %d, %v; want 1 recovered", n, err)
			}
			for _, d := range []string{DirPending, DirApproved, DirRejected} {
				want := []string(nil)
				if d == c.folder {
					want = []string{name}
				}
				if got := visible(t, v, d); !slices.Equal(got, want) {
					t.Errorf("%s/ = %v, want %v", d, got, want)
				}
			}
			leftovers, _ := os.ReadDir(filepath.Join(v.Root(), DirPending))
			for _, e := range leftovers {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			it, err := v.Resolve(name)
			if err != nil {
				t.Fatal(err)
			}
			if it.Folder != c.folder || strings.TrimSpace(it.Status) != c.status {
				t.Fatalf("recovered as %s/%s status %q, want %s/ status %q", it.Folder, it.Name, it.Status, c.folder, c.status)
			}
			data := readFile(t, it.Path)
			switch c.folder {
			case DirPending:
				if strings.Contains(data, "decided_via") || strings.Contains(data, "Corrected body.") {
					t.Errorf("a request put back undecided carries a decision:\n%s", data)
				}
			case DirApproved:
				if !strings.Contains(data, "Corrected body.") || !strings.Contains(data, ViaPage) {
					t.Errorf("the finished approval lost its correction or its via:\n%s", data)
				}
			case DirRejected:
				if !strings.Contains(data, "not this one") {
					t.Errorf("the finished rejection lost its reason:\n%s", data)
				}
			}
		})
	}
}

// TestOldFormatHoldIsRecovered: a hold of the format before holds named
// their request (".tmp-decide-<hex>.md", what a killed decider of the
// previous version left) is put back in Pending_Approval/ under a name
// carrying its id once an hour old, not removed as a temporary file.
func TestOldFormatHoldIsRecovered(t *testing.T) {
	t.Parallel()
	v, clock := newVault(t, Options{})
	name := pending(t, v, sendReq())
	held := filepath.Join(v.Root(), DirPending, ".tmp-decide-0123456789abcdef.md")
	if err := os.Rename(v.path(DirPending, name), held); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(held, t0, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := v.SweepTemp(time.Hour); err != nil || n != 0 {
		t.Fatalf("sweep of a fresh hold: %d, %v", n, err)
	}
	clock.Advance(2 * time.Hour)
	if _, err := v.SweepTemp(time.Hour); err != nil {
		t.Fatal(err)
	}
	names := visible(t, v, DirPending)
	id := name[strings.LastIndex(name, "_")+1 : len(name)-len(".md")]
	if len(names) != 1 || !strings.Contains(names[0], id) {
		t.Fatalf("Pending_Approval/ = %v, want the request back under a name with its id %s", names, id)
	}
	if _, err := v.Resolve(id); err != nil {
		t.Fatalf("the recovered request does not resolve by its id: %v", err)
	}
}

// TestHoldNameKeepsTheEnd: a request name too long for a hold keeps its
// end, where mailgate's names carry the id, and the hold parses back.
func TestHoldNameKeepsTheEnd(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 120) + "_0123456789abcdef0123456789abcdef.md"
	h := holdName(t0, "abcd", DirApproved, long)
	if len(h) > maxName {
		t.Fatalf("hold name of %d bytes", len(h))
	}
	taken, state, name, ok := parseHold(h)
	if !ok || !taken.Equal(t0) || state != DirApproved || !strings.HasSuffix(long, name) || !strings.HasSuffix(name, "_0123456789abcdef0123456789abcdef.md") {
		t.Fatalf("parseHold(%q) = %v %q %q %v", h, taken, state, name, ok)
	}
}

// writeAged writes a file last modified at mtime, as a killed process
// left it.
func writeAged(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	writeFile(t, path, data)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// visible is a folder's names a reader sees (no dot files).
func visible(t *testing.T, v *Vault, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range dirNames(t, v, dir) {
		if !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out
}

func TestSweepTempRemovesOnlyOldLeftovers(t *testing.T) {
	t.Parallel()
	v, c := newVault(t, Options{})
	old, fresh := c.Now().Add(-2*time.Hour), c.Now().Add(-time.Minute)
	write := func(dir, name string, mtime time.Time) { writeAged(t, v.path(dir, name), "x", mtime) }
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		write(d, ".tmp-0123456789abcdef", old)                 // a killed writer's leftover (before atomicfile)
		write(d, ".EMAIL_SEND_abc.md7240412318890913151", old) // and atomicfile's (renameio's name)
		write(d, ".tmp-fedcba9876543210", fresh)               // may still be being written
		write(d, "EMAIL_SEND_abc.md", old)                     // a request: never the sweep's
		write(d, "tmp-notes.md", old)                          // the human's file
	}
	// Not regular files: left alone even with the prefix.
	if err := os.Mkdir(filepath.Join(v.Root(), DirDone, ".tmp-folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(v.Root(), DirDone, "EMAIL_SEND_abc.md")
	if err := os.Symlink(target, filepath.Join(v.Root(), DirApproved, ".tmp-link")); err != nil {
		t.Fatal(err)
	}

	n, err := v.SweepTemp(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("removed %d files, want 10 (two per folder)", n)
	}
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		names := dirNames(t, v, d)
		if slices.Contains(names, ".tmp-0123456789abcdef") || slices.Contains(names, ".EMAIL_SEND_abc.md7240412318890913151") {
			t.Errorf("%s: old leftover kept: %v", d, names)
		}
		for _, keep := range []string{".tmp-fedcba9876543210", "EMAIL_SEND_abc.md", "tmp-notes.md"} {
			if !slices.Contains(names, keep) {
				t.Errorf("%s: %s removed: %v", d, keep, names)
			}
		}
	}
	if !slices.Contains(dirNames(t, v, DirDone), ".tmp-folder") {
		t.Error("a folder with the prefix was removed")
	}
	if !slices.Contains(dirNames(t, v, DirApproved), ".tmp-link") {
		t.Error("a symlink with the prefix was removed")
	}

	// A second sweep finds nothing more.
	if n, err := v.SweepTemp(time.Hour); err != nil || n != 0 {
		t.Fatalf("second sweep: %d, %v", n, err)
	}
}

func TestSweepTempReportsUnreadableFolder(t *testing.T) {
	t.Parallel()
	v, c := newVault(t, Options{})
	writeAged(t, v.path(DirLogs, ".tmp-0123456789abcdef"), "", c.Now().Add(-2*time.Hour))
	if err := os.RemoveAll(filepath.Join(v.Root(), DirDone)); err != nil {
		t.Fatal(err)
	}
	n, err := v.SweepTemp(time.Hour)
	if err == nil {
		t.Fatal("a missing Done/ was not reported")
	}
	if n != 1 {
		t.Fatalf("removed %d, want 1: one missing folder must not stop the others", n)
	}
}
