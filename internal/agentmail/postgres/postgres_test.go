package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// openStore opens the engine on a fresh PostgreSQL store (skipping without
// one: make test-pg and CI provide it).
func openStore(t *testing.T) *Store {
	t.Helper()
	if storetest.PostgresURL() == "" {
		t.Skip("needs PostgreSQL (" + storetest.EnvPostgres + ")")
	}
	st, err := Open(context.Background(), storetest.Open(t))
	return testutil.Closing(t, st, err)
}

// A statement whose error the Service ignored still fails the transaction
// with that error: on PostgreSQL the transaction is aborted anyway, and
// COMMIT would otherwise answer a bare ROLLBACK that hides the cause and
// that no retry recognises (the fleet test once lost sends that way, to a
// serialization failure in a lookup whose error was dropped).
func TestWriteReportsSwallowedStatementErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)

	t.Run("ordinary error is reported, not retried", func(t *testing.T) {
		calls := 0
		err := st.Write(ctx, func(atx agentmail.Tx) error {
			calls++
			var n int
			_ = atx.(*tx).queryRow(ctx, `SELECT 1/0`).Scan(&n) // dropped on purpose
			return nil
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "22012" || errors.Is(err, pgx.ErrTxCommitRollback) {
			t.Fatalf("Write = %v; want the division_by_zero (22012) the statement raised", err)
		}
		if calls != 1 {
			t.Fatalf("fn ran %d times; an ordinary error must not be retried", calls)
		}
	})

	t.Run("serialization failure runs the transaction again", func(t *testing.T) {
		calls := 0
		err := st.Write(ctx, func(atx agentmail.Tx) error {
			calls++
			if calls == 1 {
				_, _ = atx.(*tx).exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = 'serialization_failure'; END $$`)
			}
			return nil
		})
		if err != nil || calls != 2 {
			t.Fatalf("Write = %v after %d calls; want success on the second", err, calls)
		}
	})

	t.Run("a savepoint rollback clears the failure", func(t *testing.T) {
		err := st.Read(ctx, func(atx agentmail.Tx) error {
			pt := atx.(*tx)
			if err := pt.savepoint(ctx, func() error {
				_, err := pt.exec(ctx, `SELECT 1/0`)
				return err
			}); err == nil {
				t.Error("the statement inside the savepoint did not fail")
			}
			var n int
			return pt.queryRow(ctx, `SELECT 1`).Scan(&n)
		})
		if err != nil {
			t.Fatalf("Read after a rolled-back savepoint = %v; want success", err)
		}
	})
}

// A read's full-text search runs without a savepoint (two round trips
// fewer); when its statement fails all the same, the read runs again with
// the savepoint, so the Service's LIKE fallback in the same transaction
// still answers. The same holds for ReadEach, whose statements run outside
// a transaction: its second run is Read's, with the savepoint. The failure
// here is forced with a negative window (LIMIT -1), which PostgreSQL
// refuses.
func TestReadSearchFailureRunsAgainWithSavepoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	match, _ := agentmail.ParseQuery("deploy")
	if match == nil {
		t.Fatal("ParseQuery(deploy) = nil")
	}
	for _, read := range []struct {
		name string
		fn   func(context.Context, func(agentmail.Tx) error) error
	}{{"Read", st.Read}, {"ReadEach", st.ReadEach}} {
		runs, failures := 0, 0
		err := read.fn(ctx, func(atx agentmail.Tx) error {
			runs++
			_, _, err := atx.Search(ctx, agentmail.SearchQuery{ProjectID: 1, Match: match, Terms: []string{"deploy"}, Limit: 5, Window: -1})
			if err == nil {
				t.Errorf("%s: the search with LIMIT -1 did not fail", read.name)
				return nil
			}
			failures++
			_, _, err = atx.Search(ctx, agentmail.SearchQuery{ProjectID: 1, Terms: []string{"deploy"}, Limit: 5, Window: 5})
			return err
		})
		if err != nil {
			t.Fatalf("%s with a failed search and its LIKE fallback = %v; want success", read.name, err)
		}
		if runs != 2 || failures != 2 {
			t.Fatalf("%s: fn ran %d times, its search failed %d times; want 2 and 2 (unguarded, then with the savepoint)", read.name, runs, failures)
		}

		// A search that succeeds runs once, without the savepoint.
		runs = 0
		if err := read.fn(ctx, func(atx agentmail.Tx) error {
			runs++
			_, _, err := atx.Search(ctx, agentmail.SearchQuery{ProjectID: 1, Match: match, Terms: []string{"deploy"}, Limit: 5, Window: 5})
			return err
		}); err != nil || runs != 1 {
			t.Fatalf("%s with a search = %v after %d runs; want success after 1", read.name, err, runs)
		}
	}
}
