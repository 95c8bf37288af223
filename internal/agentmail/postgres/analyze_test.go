package postgres

import (
	"context"
	"testing"
)

// The store analyzes am_messages once its sends have inserted
// analyzeFirst messages, in the background, and not again within
// analyzeEvery: reltuples, -1 on a table never analyzed, becomes the
// table's count (0 here) once it has run.
func TestAnalyzeAfterInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	reltuples := func() float64 {
		t.Helper()
		var n float64
		if err := st.db.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'am_messages'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := reltuples(); n != -1 {
		t.Fatalf("reltuples of a fresh am_messages = %v, want -1 (never analyzed)", n)
	}
	st.inserted(analyzeFirst - 1)
	st.analyze.wg.Wait()
	if n := reltuples(); n != -1 {
		t.Fatalf("analyzed after %d inserts (reltuples %v); want the first at %d", analyzeFirst-1, n, analyzeFirst)
	}
	st.inserted(1)
	st.analyze.wg.Wait()
	if n := reltuples(); n != 0 {
		t.Fatalf("reltuples after %d inserts = %v, want 0 (analyzed, empty)", analyzeFirst, n)
	}
	st.inserted(analyzeFirst)
	st.analyze.mu.Lock()
	running, pending := st.analyze.running, st.analyze.inserted
	st.analyze.mu.Unlock()
	if running || pending != analyzeFirst {
		t.Errorf("right after an analyze: running %v with %d inserts pending; want none running, %d pending", running, pending, analyzeFirst)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
