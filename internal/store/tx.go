package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/retry"
)

// RetryBudget bounds how long Write and Read keep running a transaction
// that loses races: on SQLite a lock error that outlived the 30 s busy
// timeout (rare: one attempt spends the budget), on PostgreSQL a
// serialization failure, which writers on hot rows cause many times a
// second; a transaction that keeps losing for this long reports its last
// error.
const RetryBudget = 15 * time.Second

// Write runs fn in one write transaction and commits it, running it again
// when the engine reports a lost race: on SQLite the transaction is BEGIN
// IMMEDIATE (the store's default), so writers from every process queue on
// the file's lock; on PostgreSQL it is SERIALIZABLE, so servers on many hosts
// get the same guarantee: the outcome is as if the transactions ran one at a
// time, or one of them fails with a serialization error and runs again here.
// fn must therefore have no effect outside tx.
func (db *DB) Write(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.Retry(ctx, func() error { return db.run(ctx, db.WriteOptions(), fn) })
}

// Read runs fn in a read-only transaction on one consistent snapshot.
func (db *DB) Read(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.Retry(ctx, func() error { return db.run(ctx, db.ReadOptions(), fn) })
}

// WriteOptions are the options of a write transaction on db's engine.
func (db *DB) WriteOptions() *sql.TxOptions {
	if db.Dialect == Postgres {
		return &sql.TxOptions{Isolation: sql.LevelSerializable}
	}
	return nil // the connection's _txlock=immediate
}

// ReadOptions are the options of a read-only transaction on db's engine.
func (db *DB) ReadOptions() *sql.TxOptions {
	if db.Dialect == Postgres {
		// One snapshot for the whole transaction; a read-only one never
		// fails with a serialization error at this level.
		return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return &sql.TxOptions{ReadOnly: true}
}

func (db *DB) run(ctx context.Context, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// Retry calls f until it succeeds, fails with an error that is not a lost
// race (see Retryable), RetryBudget has passed, or ctx ends. The first
// retry runs at once (the winner has committed), later ones after a growing,
// jittered pause (2 ms up to 250 ms). It returns f's last error, never a
// bare context error.
func (db *DB) Retry(ctx context.Context, f func() error) error {
	runs := 0
	return retry.Do(ctx, txRetry, db.Retryable, func() error {
		if runs++; runs > 1 {
			CountRetry() // the metric mailgate_store_tx_retries_total
		}
		return f()
	})
}

// txRetry is the policy of Retry: short waits, as the race is with a
// transaction of milliseconds.
var txRetry = retry.Policy{Initial: 2 * time.Millisecond, Max: 250 * time.Millisecond,
	Multiplier: 1.6, Jitter: 0.5, Budget: RetryBudget}

// Retryable reports whether err means the transaction lost a race with
// another writer and may run again: SQLITE_BUSY on SQLite, a serialization
// failure or deadlock on PostgreSQL.
func (db *DB) Retryable(err error) bool {
	if db.Dialect == Postgres {
		return pgRetryable(err)
	}
	return IsBusy(err)
}

// Rebind rewrites a query written with SQLite's placeholders (? in order, or
// ?N by number) for db's engine: PostgreSQL wants $N. Placeholders inside
// quoted literals and identifiers are left alone. Queries are constants, so
// callers on hot paths may keep the result.
func (db *DB) Rebind(query string) string {
	if db.Dialect != Postgres {
		return query
	}
	return RebindPostgres(query)
}

// RebindPostgres is Rebind for PostgreSQL.
func RebindPostgres(query string) string {
	if !strings.ContainsRune(query, '?') {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(query[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
