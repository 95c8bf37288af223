// Package drafts records in the state store which Gmail drafts mailgate
// created, so that update_draft changes only those.
//
// Why: a draft is not sent, so changing one needs no approval; but a
// draft the user wrote in Gmail is theirs, and an agent that rewrites it
// (adds a Bcc, say) leaks mail the day the user sends it from Gmail, with
// no approval ever asked. Gmail does not say who wrote a draft, so
// mailgate keeps the ids of the drafts it created (draft_email) and
// update_draft refuses any other. Sending any draft (send_draft) stays
// behind the approval gate, whoever wrote it.
package drafts

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Registry is the store's record of the drafts mailgate created.
type Registry struct {
	db  *store.DB
	now func() time.Time
}

// New migrates db (the drafts_created table) and returns its registry.
func New(ctx context.Context, db *store.DB) (*Registry, error) {
	if err := db.MigrateDialect(ctx, "drafts", migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("drafts: %w", err)
	}
	return &Registry{db: db, now: time.Now}, nil
}

// Record notes that mailgate created draft id (again is a no-op).
func (r *Registry) Record(ctx context.Context, id string) error {
	err := r.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, r.db.Rebind(
			`INSERT INTO drafts_created (draft_id, created_ms) VALUES (?, ?) ON CONFLICT (draft_id) DO NOTHING`),
			id, r.now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("drafts: recording %s: %w", id, err)
	}
	return nil
}

// Created reports whether mailgate created draft id.
func (r *Registry) Created(ctx context.Context, id string) (bool, error) {
	var one int
	err := r.db.QueryRowContext(ctx, r.db.Rebind(`SELECT 1 FROM drafts_created WHERE draft_id = ?`), id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("drafts: %w", err)
	}
	return true, nil
}
