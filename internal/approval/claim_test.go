package approval

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

func TestClaimRaceOneWinner(t *testing.T) {
	t.Parallel()
	withAndWithoutLedger(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		v, req, _ := approvedSend(t, o)
		const n = 16
		var won, lost atomic.Int32
		testutil.Race(n, func(int) {
			a, err := v.Find(ctx, req)
			if err != nil {
				lost.Add(1) // already claimed and gone
				return
			}
			if _, err := v.Claim(ctx, a); err == nil {
				won.Add(1)
			} else if errors.Is(err, ErrAlreadyClaimed) {
				lost.Add(1)
			} else {
				t.Errorf("Claim: %v", err)
			}
		})
		if won.Load() != 1 || won.Load()+lost.Load() != n {
			t.Fatalf("won %d, lost %d", won.Load(), lost.Load())
		}
		if d := dirNames(t, v, DirDone); len(d) != 1 {
			t.Fatalf("Done/ = %v", d)
		}
	})
}

func TestClaimRefusesChangedFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		swap func(t *testing.T, v *Vault, path string)
	}{
		{"edited", func(t *testing.T, _ *Vault, p string) {
			writeFile(t, p, strings.Replace(readFile(t, p), "Notes attached.", "Wire $10k.", 1))
		}},
		{"replaced by symlink", func(t *testing.T, v *Vault, p string) {
			target := v.path(DirLogs, "target.md")
			writeFile(t, target, readFile(t, p))
			os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			v, req, _ := approvedSend(t, Options{})
			a := mustFind(t, v, req)
			tc.swap(t, v, a.Path)
			if _, err := v.Claim(ctx, a); !errors.Is(err, ErrChanged) {
				t.Fatalf("Claim = %v, want ErrChanged", err)
			}
			if d := dirNames(t, v, DirDone); len(d) != 0 {
				t.Fatalf("changed file consumed: %v", d)
			}
		})
	}
}

func TestClaimGoneIsAlreadyClaimed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, req, _ := approvedSend(t, Options{})
	a := mustFind(t, v, req)
	os.Remove(a.Path)
	if _, err := v.Claim(ctx, a); !errors.Is(err, ErrAlreadyClaimed) {
		t.Fatalf("Claim = %v", err)
	}
}

// TestRecordKeepsHumanEdits: a CRLF file with extra fields keeps them, its
// line endings and its body; outcomes replace each other cleanly.
func TestRecordKeepsHumanEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v, req, name := approvedSend(t, Options{})
	p := v.path(DirApproved, name)
	edited := strings.Replace(readFile(t, p), "status: pending\n", "status: pending\nreviewer: |\n  Looked fine.\n  Twice.\ntags:\n- ok\n", 1)
	edited = strings.ReplaceAll(edited, "\n", "\r\n")
	writeFile(t, p, edited)
	a := mustFind(t, v, req)
	c, err := v.Claim(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Record(Outcome{Status: StatusUnknown, Error: "timeout\nafter 30s"}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, c.Path)
	for _, want := range []string{"reviewer: |\r\n  Looked fine.\r\n  Twice.\r\n", "tags:\r\n- ok\r\n",
		"\r\nstatus: unknown\r\n", "\r\nerror: \"timeout after 30s\"\r\n", "\r\nclaimed_at: "} {
		if !strings.Contains(got, want) {
			t.Errorf("Done file lacks %q:\n%q", want, got)
		}
	}
	bodyStart := strings.Index(edited, BodyMarker)
	if !strings.HasSuffix(got, edited[bodyStart:]) {
		t.Errorf("body bytes changed:\n%q", got)
	}
	p2, err := parseApproval([]byte(got))
	if err != nil || p2.Status != StatusUnknown {
		t.Fatalf("reparse: %+v %v", p2, err)
	}
	if strings.Count(got, "status:") != 1 {
		t.Errorf("status duplicated:\n%s", got)
	}
}
