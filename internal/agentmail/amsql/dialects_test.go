package amsql

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// TestStatementsRebind: every statement of a Statements goes through its
// Rebind (PostgreSQL), and through none without one (SQLite).
func TestStatementsRebind(t *testing.T) {
	t.Parallel()
	var got []string
	rec := Statements{
		ExecFn:     func(_ context.Context, q string, _ ...any) (sql.Result, error) { got = append(got, q); return nil, nil },
		QueryFn:    func(_ context.Context, q string, _ ...any) (*sql.Rows, error) { got = append(got, q); return nil, nil },
		QueryRowFn: func(_ context.Context, q string, _ ...any) Row { got = append(got, q); return nil },
	}
	ctx := context.Background()
	const q = `SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?`
	for _, s := range []Statements{rec, func() Statements { r := rec; r.Rebind = PostgresRebind; return r }()} {
		s.Exec(ctx, q)
		s.Query(ctx, q)
		s.QueryRow(ctx, q)
	}
	want := []string{q, q, q}
	pg := `SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2`
	want = append(want, pg, pg, pg)
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d ran %q, want %q", i, got[i], want[i])
		}
	}
	if PostgresRebind(q) != pg { // the second call answers from the cache
		t.Errorf("cached rebind = %q", PostgresRebind(q))
	}
}

// TestTimes: microsecond columns round-trip, NULL is the zero time, and an
// absent since means every row.
func TestTimes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	if got := FromUS(sql.NullInt64{Int64: US(at).(int64), Valid: true}); !got.Equal(at) {
		t.Errorf("round trip = %v", got)
	}
	if US(time.Time{}) != nil || !FromUS(sql.NullInt64{}).IsZero() {
		t.Error("the zero time is not NULL")
	}
	if After(time.Time{}) != -1 || After(at) != at.UnixMicro() {
		t.Error("After")
	}
	if !errors.Is(NotFound(sql.ErrNoRows), agentmail.ErrNotFound) || NotFound(nil) != nil {
		t.Error("NotFound")
	}
}
