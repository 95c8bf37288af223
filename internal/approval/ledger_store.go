package approval

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

// StoreLedger is the Ledger kept in mailgate's state store (component
// "approval"), shared by every process on the store: one SQLite file, or one
// PostgreSQL database for servers on many hosts. The SQL is the same on both.
type StoreLedger struct {
	db *store.DB
	q  ledgerQueries
}

var _ Ledger = (*StoreLedger)(nil)

type ledgerQueries struct{ prune, issue, issued, consume, exists string }

// NewStoreLedger migrates the "approval" component of db and returns the
// ledger.
func NewStoreLedger(ctx context.Context, db *store.DB) (*StoreLedger, error) {
	if err := db.MigrateDialect(ctx, "approval", migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("opening request ledger: %w", err)
	}
	return &StoreLedger{db: db, q: ledgerQueries{
		prune: db.Rebind(`DELETE FROM approval_requests WHERE created_ms < ?`),
		issue: db.Rebind(`INSERT INTO approval_requests (request_id, sha256, created_ms) VALUES (?, ?, ?)
			ON CONFLICT (request_id) DO NOTHING`),
		issued: db.Rebind(`SELECT count(*) FROM approval_requests
			WHERE request_id = ? AND sha256 = ? AND consumed_ms IS NULL`),
		// One statement decides the claim: of two consumers racing (in two
		// processes, or on two hosts), the second finds consumed_ms set
		// once the first commits and updates nothing.
		consume: db.Rebind(`UPDATE approval_requests SET consumed_ms = ?
			WHERE request_id = ? AND sha256 = ? AND consumed_ms IS NULL`),
		exists: db.Rebind(`SELECT count(*) FROM approval_requests WHERE request_id = ? AND sha256 = ?`),
	}}, nil
}

// Retention is how long ledger rows are kept. Requests older than this can
// no longer be approved (far beyond any sensible APPROVAL_TTL).
const Retention = 90 * 24 * time.Hour

func (l *StoreLedger) Issue(ctx context.Context, id, sha string, t time.Time) error {
	err := l.db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, l.q.prune, t.Add(-Retention).UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, l.q.issue, id, sha, t.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("issuing request %s: %w", id, err)
	}
	return nil
}

func (l *StoreLedger) Issued(ctx context.Context, id, sha string) (bool, error) {
	var n int
	if err := l.db.QueryRowContext(ctx, l.q.issued, id, sha).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up request %s: %w", id, err)
	}
	return n > 0, nil
}

func (l *StoreLedger) Consume(ctx context.Context, id, sha string, t time.Time) error {
	var outcome error
	err := l.db.Write(ctx, func(tx *sql.Tx) error {
		outcome = nil
		res, err := tx.ExecContext(ctx, l.q.consume, t.UnixMilli(), id, sha)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var known int
		if err := tx.QueryRowContext(ctx, l.q.exists, id, sha).Scan(&known); err != nil {
			return err
		}
		if known == 0 {
			outcome = ErrNotIssued
		} else {
			outcome = ErrAlreadyClaimed
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("consuming request %s: %w", id, err)
	}
	return outcome
}
