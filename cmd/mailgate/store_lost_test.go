package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/store/storetest"
)

// Issue 31 item 3: a store that lost its history never starts silently.

// serveOnce runs `mailgate serve` with stdin closed: the store opens (or
// fails) and the server ends. It returns stderr and the exit status main
// would give. In-process (main's dispatch, no process start): what is
// tested is what serve does with the store and says, not the process.
func (w *world) serveOnce() (string, int) {
	w.t.Helper()
	r := newSetupRun(append(append([]string{}, w.env...), "GOGC=100"), nil, "serve") // GOGC: see connectHere
	r.env.dir = "/"
	code := exitCode(run(context.Background(), r.env), r.stderr)
	return r.stderr.String(), code
}

func (w *world) storePath() string {
	w.t.Helper()
	path := filepath.Join(w.home, "state.db")
	if _, err := os.Stat(path); err != nil {
		w.t.Fatalf("the store is not at %s: %v", path, err)
	}
	return path
}

func TestServeRefusesAStoreThatLostItsHistory(t *testing.T) {
	parallel(t)
	if storetest.PostgresURL() != "" {
		t.Skip("a SQLite file's damage")
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, "is empty (0 bytes)"},
		{"damaged pages", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 8*4096 {
				t.Fatalf("the store is only %d bytes", len(b))
			}
			// Pages 2 onwards of the middle of the file overwritten.
			for i := 4096; i < len(b)-4096; i++ {
				if (i/4096)%2 == 1 {
					b[i] = 0xA5
				}
			}
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, false)
			w.prepareApprovals(3)
			path := w.storePath()
			// Every server has ended: the WAL is checkpointed into the file.
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
			tc.damage(t, path)
			before, _ := os.ReadFile(path)
			stderr, code := w.serveOnce()
			if code == 0 {
				t.Fatalf("serve on a store that %s: exit status 0 (want a refusal)\n%s", tc.want, stderr)
			}
			for _, want := range []string{tc.want, "Restore it from a backup", "mv " + path + " " + path + ".broken"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Error("serve changed the refused store")
			}
		})
	}
}

// A store deleted beside a vault with history: the server starts, says so
// at WARN, and rebuilds the send window from the audit log, so ten sends
// in the last hour still hold the limit of ten.
func TestServeRebuildsTheSendLimitOfADeletedStore(t *testing.T) {
	parallel(t)
	if storetest.PostgresURL() != "" {
		t.Skip("deletes the SQLite file")
	}
	w := newWorld(t, false, "SEND_LIMIT_PER_HOUR=10")
	w.prepareApprovals(10)
	cs := w.connectHere()
	for i := range 10 {
		if text, _ := call(t, cs, "send_email", sendArgs(i)); !strings.HasPrefix(text, "Email sent successfully.") {
			t.Fatalf("send %d: %s", i, text)
		}
	}
	cs.Close()
	path := w.storePath()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}

	stderr, code := w.serveOnce()
	if code != 0 {
		t.Fatalf("serve beside a deleted store: exit status %d\n%s", code, stderr)
	}
	for _, want := range []string{"level=WARN", "is new, but the vault", "holds 10 email(s) in Done/", "rebuilt from the audit log (10 send(s) in the last hour)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if out, code := runHere(t, "", w.env, "approvals"); code != 0 || !strings.Contains(out, "WARNING: The store "+path+" is new") {
		t.Errorf("mailgate approvals does not warn: exit status %d\n%s", code, out)
	}

	// The new store's ledger is empty: the eleventh email is requested and
	// approved anew, and then held by the rebuilt window.
	cs = w.connectHere()
	if text, _ := call(t, cs, "send_email", sendArgs(10)); !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("request 10: %s", text)
	}
	w.approveAll()
	text, _ := call(t, cs, "send_email", sendArgs(10))
	if !nextSendRe.MatchString(text) {
		t.Fatalf("the eleventh send in the hour after the store was deleted: %q; want the rate limit", text)
	}
	if n := len(w.gm.Sent()); n != 10 {
		t.Fatalf("Gmail got %d sends, want 10", n)
	}
}
