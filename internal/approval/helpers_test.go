package approval

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

var t0 = time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC)

func newVault(t testing.TB, o Options) (*Vault, *testutil.Clock) {
	t.Helper()
	c := testutil.NewClock(t0)
	if o.Now == nil {
		o.Now = c.Now
	}
	v, err := Open(filepath.Join(t.TempDir(), "vault"), o)
	if err != nil {
		t.Fatal(err)
	}
	return v, c
}

func newLedger(t testing.TB) *StoreLedger {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	l, err := NewStoreLedger(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func sendReq() Request {
	return Request{Kind: KindSend, To: "John <john@example.com>", Subject: "Meeting notes",
		Body: "Hi John,\n\nNotes attached.\n\n-- \nAgent\n"}
}

func replyReq() Request {
	return Request{Kind: KindReply, ThreadID: "18d5a3b2c1d0e0f1", MessageID: "18d5a3b2c1d0e0f2",
		To: "ann@example.org", Subject: "Re: Budget", Body: "Agreed.\n"}
}

// requestAndApprove writes the pending file for req and moves it to
// Approved/, as the human does.
func requestAndApprove(t testing.TB, v *Vault, req Request) string {
	t.Helper()
	name := pending(t, v, req)
	move(t, v, DirPending, DirApproved, name)
	return name
}

// pending writes the pending file for req and returns its name.
func pending(t testing.TB, v *Vault, req Request) string {
	t.Helper()
	name, err := v.EnsurePending(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func move(t testing.TB, v *Vault, from, to, name string) {
	t.Helper()
	if err := os.Rename(v.path(from, name), v.path(to, name)); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func dirNames(t testing.TB, v *Vault, dir string) []string {
	t.Helper()
	names, err := readDirNames(filepath.Join(v.root, dir))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

// editField replaces the value of key in a file's frontmatter.
func editField(t testing.TB, path, key, value string) {
	t.Helper()
	lines := strings.Split(readFile(t, path), "\n")
	found := false
	for i, l := range lines {
		if strings.HasPrefix(l, key+":") {
			lines[i] = key + ": " + value
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("no %s in %s", key, path)
	}
	writeFile(t, path, strings.Join(lines, "\n"))
}

// approvedSend is a vault (with options o) in which sendReq() is approved:
// the vault, the request and the file's name in Approved/.
func approvedSend(t testing.TB, o Options) (*Vault, Request, string) {
	t.Helper()
	v, _ := newVault(t, o)
	req := sendReq()
	return v, req, requestAndApprove(t, v, req)
}

// mustFind is v.Find(req), which must succeed.
func mustFind(t testing.TB, v *Vault, req Request) *Approval {
	t.Helper()
	a, err := v.Find(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// withAndWithoutLedger runs f as two subtests: a vault without a ledger,
// and one whose Options carry a ledger on the test store.
func withAndWithoutLedger(t *testing.T, f func(t *testing.T, o Options)) {
	t.Run("no ledger", func(t *testing.T) { f(t, Options{}) })
	t.Run("ledger", func(t *testing.T) { f(t, Options{Ledger: newLedger(t)}) })
}
