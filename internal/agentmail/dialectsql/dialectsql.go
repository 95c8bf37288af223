// Package dialectsql is what the dialects' SQL (agentmail/channels,
// agentmail/mailboxset) needs from an engine: a transaction's statements,
// with queries written once in SQLite's placeholders (?, ?N) that the
// PostgreSQL store rebinds (store.RebindPostgres), and the helpers of the
// agent-mail tables' conventions (times as microseconds, NULL for none).
// It imports no engine: each engine's store hands its transaction over as a
// Querier, so the dialects' SQL is one body of code for both.
package dialectsql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Port implements a dialect's agentmail.Port on an engine's store: Write
// and Read run the store's own transactions (E) through its write and read,
// and Wrap makes each one the dialect's transaction (T).
type Port[E any, T agentmail.Tx] struct {
	WriteE, ReadE func(context.Context, func(E) error) error
	Wrap          func(E) T
}

func (p Port[E, T]) Write(ctx context.Context, fn func(T) error) error {
	return p.WriteE(ctx, func(e E) error { return fn(p.Wrap(e)) })
}

func (p Port[E, T]) Read(ctx context.Context, fn func(T) error) error {
	return p.ReadE(ctx, func(e E) error { return fn(p.Wrap(e)) })
}

// Querier runs statements in one transaction of an engine's store. Errors
// are the engine's own (a unique-constraint race is agentmail.ErrConflict;
// on PostgreSQL a failed statement is also remembered, so the transaction
// reports it even when the caller goes on).
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is one row's answer (a *sql.Row, or an engine's wrapper of one).
type Row interface {
	Scan(dest ...any) error
}

// US stores a time as microseconds since the epoch (NULL for the zero time).
func US(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// FromUS reads a microseconds column (the zero time for NULL).
func FromUS(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

// After is the bound of an "after since" filter: since in microseconds, or
// -1 (every row) for the zero time.
func After(since time.Time) int64 {
	if since.IsZero() {
		return -1
	}
	return since.UnixMicro()
}

// NotFound maps sql.ErrNoRows to agentmail.ErrNotFound.
func NotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return agentmail.ErrNotFound
	}
	return err
}

// Flag stores a bool as 0 or 1: SQLite has no boolean type, and the
// PostgreSQL driver does not encode a Go bool as an integer.
func Flag(b bool) int {
	if b {
		return 1
	}
	return 0
}
