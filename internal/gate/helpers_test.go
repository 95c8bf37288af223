package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

var t0 = time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC)

// env is one mailgate installation: vault, store and audit directory under
// one folder, so several Gates (or processes) can share it.
type env struct {
	dir   string
	limit int
	mode  approval.Mode
	*testutil.Clock
}

// migrated is a store the gate's components (ledger, limiter) migrated
// once per test process: each env gets a copy (storetest.Template).
var migrated = storetest.NewTemplate(func(ctx context.Context, db *store.DB) error {
	if _, err := approval.NewStoreLedger(ctx, db); err != nil {
		return err
	}
	_, err := ratelimit.New(ctx, db, 1, time.Hour)
	return err
})

func newEnv(t testing.TB, limit int) *env {
	e := &env{dir: t.TempDir(), limit: limit, Clock: testutil.NewClock(t0)}
	// The store may be PostgreSQL (storetest): child processes find its DSN here.
	if err := os.WriteFile(filepath.Join(e.dir, "dsn"), []byte(migrated.DSN(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) vaultDir() string { return filepath.Join(e.dir, "vault") }
func (e *env) auditDir() string { return filepath.Join(e.dir, "audit") }

// gate opens a Gate on the environment (a fresh store connection each time,
// as a separate process would have).
func (e *env) gate(t testing.TB, dev bool) *Gate {
	t.Helper()
	g, closeFn, err := openGate(e.dir, e.limit, e.mode, dev, e.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return g
}

// openGate wires a Gate the way the server does: store, ledger, vault,
// limiter, audit log.
func openGate(dir string, limit int, mode approval.Mode, dev bool, now func() time.Time) (*Gate, func(), error) {
	ctx := context.Background()
	dsn, err := os.ReadFile(filepath.Join(dir, "dsn"))
	if err != nil {
		return nil, nil, err
	}
	db, err := store.Open(ctx, string(dsn))
	if err != nil {
		return nil, nil, err
	}
	ledger, err := approval.NewStoreLedger(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	v, err := approval.Open(filepath.Join(dir, "vault"), approval.Options{Mode: mode, Now: now, Ledger: ledger})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	lim, err := ratelimit.New(ctx, db, limit, time.Hour)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	al, err := audit.Open(filepath.Join(dir, "audit"))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	g := &Gate{Vault: v, Limiter: lim, Audit: al, DevMode: dev, Now: now}
	return g, func() { al.Close(); db.Close() }, nil
}

// fakeSend counts Gmail calls and answers with err or fixed ids.
type fakeSend struct {
	calls atomic.Int32
	err   error
	panic bool
}

func (f *fakeSend) send(context.Context) (SendResult, error) {
	n := f.calls.Add(1)
	if f.panic {
		panic("boom")
	}
	if f.err != nil {
		return SendResult{}, f.err
	}
	return SendResult{MessageID: fmt.Sprintf("msg%d", n), ThreadID: "thr1"}, nil
}

type netErr struct {
	msg            string
	never, refused bool
}

func (e netErr) Error() string      { return e.msg }
func (e netErr) NeverReached() bool { return e.never }
func (e netErr) Refused() bool      { return e.refused }

func sendReq() approval.Request {
	return approval.Request{Kind: approval.KindSend, To: "John <john@example.com>", Subject: "Meeting notes",
		Body: "Hi John,\n\nThe notes are attached.\n"}
}

func replyReq() approval.Request {
	return approval.Request{Kind: approval.KindReply, ThreadID: "18d5a3b2c1d0e0f1", MessageID: "18d5a3b2c1d0e0f2",
		Subject: "Re: Budget", Body: "Agreed, thanks.\n"}
}

// approve makes the request file for req and moves it to Approved/, as the
// human does.
func (e *env) approve(t testing.TB, g *Gate, req approval.Request) string {
	t.Helper()
	name, err := g.Vault.EnsurePending(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.vaultDir(), approval.DirPending, name),
		filepath.Join(e.vaultDir(), approval.DirApproved, name)); err != nil {
		t.Fatal(err)
	}
	return name
}

func (e *env) names(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.vaultDir(), dir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ents {
		if !strings.HasPrefix(d.Name(), ".") {
			out = append(out, d.Name())
		}
	}
	return out
}

func (e *env) file(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.vaultDir(), dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// auditLines parses every audit line; a torn line fails the test.
func auditLines(t testing.TB, dir string) []audit.Entry {
	t.Helper()
	out, err := audit.ReadDir(dir)
	var torn *audit.TornError
	if errors.As(err, &torn) {
		// Only the SIGKILL tests kill a process mid-write; a torn line
		// is that process's, never a whole entry lost (audit's own test).
		t.Logf("audit: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return out
}
