package store_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// TestDeferredBegin: a transaction begun on a WithDeferredBegin context
// sends its BEGIN with its first statement (store/deferbegin.go). It must
// be the same transaction as one begun the ordinary way: the isolation and
// read-only mode asked for, one transaction across its statements, the
// first statement's columns as database/sql reads them from pgx, a failed
// first statement reported, a commit of a failed transaction refused, a
// rollback undoing the first statement, and the connection clean for the
// next transaction after each (the pool holds one connection).
func TestDeferredBegin(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	db := storetest.Open(t)
	db.SetMaxOpenConns(1)
	ctx := store.WithDeferredBegin(context.Background())
	if _, err := db.Exec(`CREATE TABLE deferred_begin (id bigint PRIMARY KEY, v text)`); err != nil {
		t.Fatal(err)
	}

	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		t.Fatal(err)
	}
	var iso string
	var i4, i8 int64
	var s, empty string
	var b bool
	var null sql.NullString
	var f float64
	var by []byte
	var xact1, xact2 int64
	if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation'), 4::int4, 8::int8, 'x'::text, ''::text, true, NULL::text, 1.5::float8,
		'\x0102'::bytea, pg_current_xact_id()::text::bigint`).Scan(&iso, &i4, &i8, &s, &empty, &b, &null, &f, &by, &xact1); err != nil {
		t.Fatal(err)
	}
	if iso != "serializable" || i4 != 4 || i8 != 8 || s != "x" || !b || null.Valid || f != 1.5 || string(by) != "\x01\x02" {
		t.Fatalf("first statement read %q %d %d %q %v %v %v %x", iso, i4, i8, s, b, null, f, by)
	}
	if err := tx.QueryRowContext(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&xact2); err != nil || xact2 != xact1 {
		t.Fatalf("second statement in transaction %d, the first in %d (%v)", xact2, xact1, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// Read-only, and a first statement that is an Exec.
	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO deferred_begin VALUES (1, 'ro')`); err == nil {
		t.Fatal("a read-only transaction's first statement wrote")
	}
	if err := tx.Commit(); !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("commit after a failed statement: %v, want %v", err, pgx.ErrTxCommitRollback)
	}

	// An Exec first, rolled back; then one committed.
	for _, commit := range []bool{false, true} {
		tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			t.Fatal(err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO deferred_begin VALUES (2, 'w')`)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%d rows affected", n)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM deferred_begin`).Scan(&n); err != nil || n != map[bool]int{false: 0, true: 1}[commit] {
			t.Fatalf("commit=%v: %d rows stored (%v)", commit, n, err)
		}
	}

	// A first statement that fails, and a transaction that runs none.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.QueryContext(ctx, `SELECT no_such_column FROM deferred_begin`); err == nil {
		t.Fatal("a failing first statement reported no error")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("an empty transaction's commit: %v", err)
	}

	// A statement with a pgx option cannot go in a batch: BEGIN goes alone.
	tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT current_setting('transaction_isolation')`, pgx.QueryExecModeExec).Scan(&iso); err != nil || iso != "serializable" {
		t.Fatalf("with a query mode: %q, %v", iso, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// The connection is back outside any transaction.
	var status string
	if err := db.QueryRow(`SELECT CASE WHEN pg_current_xact_id_if_assigned() IS NULL THEN 'idle' ELSE 'in transaction' END`).Scan(&status); err != nil || status != "idle" {
		t.Fatalf("after the transactions: %s, %v", status, err)
	}
}
