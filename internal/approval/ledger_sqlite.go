package approval

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// SQLiteLedger is the Ledger kept in mailgate's state store (component
// "approval"), shared by every process on the store.
type SQLiteLedger struct{ db *store.DB }

var _ Ledger = (*SQLiteLedger)(nil)

// NewSQLiteLedger migrates the "approval" component of db and returns the
// ledger.
func NewSQLiteLedger(ctx context.Context, db *store.DB) (*SQLiteLedger, error) {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("opening request ledger: %w", err)
	}
	if err := db.Migrate(ctx, "approval", sub); err != nil {
		return nil, fmt.Errorf("opening request ledger: %w", err)
	}
	return &SQLiteLedger{db: db}, nil
}

// Retention is how long ledger rows are kept. Requests older than this can
// no longer be approved (far beyond any sensible APPROVAL_TTL).
const Retention = 90 * 24 * time.Hour

func (l *SQLiteLedger) Issue(ctx context.Context, id, sha string, t time.Time) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("issuing request %s: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM approval_requests WHERE created_ms < ?`,
		t.Add(-Retention).UnixMilli()); err != nil {
		return fmt.Errorf("issuing request %s: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO approval_requests (request_id, sha256, created_ms) VALUES (?, ?, ?)
		 ON CONFLICT (request_id) DO NOTHING`, id, sha, t.UnixMilli()); err != nil {
		return fmt.Errorf("issuing request %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("issuing request %s: %w", id, err)
	}
	return nil
}

func (l *SQLiteLedger) Issued(ctx context.Context, id, sha string) (bool, error) {
	var n int
	err := l.db.QueryRowContext(ctx,
		`SELECT count(*) FROM approval_requests
		 WHERE request_id = ? AND sha256 = ? AND consumed_ms IS NULL`, id, sha).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("looking up request %s: %w", id, err)
	}
	return n > 0, nil
}

func (l *SQLiteLedger) Consume(ctx context.Context, id, sha string, t time.Time) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("consuming request %s: %w", id, err)
	}
	defer tx.Rollback()
	var consumed sql.NullInt64
	err = tx.QueryRowContext(ctx,
		`SELECT consumed_ms FROM approval_requests WHERE request_id = ? AND sha256 = ?`, id, sha).Scan(&consumed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotIssued
	case err != nil:
		return fmt.Errorf("consuming request %s: %w", id, err)
	case consumed.Valid:
		return ErrAlreadyClaimed
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE approval_requests SET consumed_ms = ? WHERE request_id = ?`, t.UnixMilli(), id); err != nil {
		return fmt.Errorf("consuming request %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("consuming request %s: %w", id, err)
	}
	return nil
}
