// Package amstore opens the agent-mail store implementation that matches the
// state store's engine: agentmail/sqlite on a SQLite file, agentmail/postgres
// on a PostgreSQL database. Both apply their own embedded migrations.
package amstore

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/postgres"
	"github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
)

// Open migrates the agent-mail schema on db and returns its store. The
// caller keeps ownership of db.
func Open(ctx context.Context, db *store.DB) (agentmail.Store, error) {
	if db.Dialect == store.Postgres {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, db)
}

// NewService opens the store on db and builds the Service over it.
func NewService(ctx context.Context, db *store.DB, opts agentmail.Options) (*agentmail.Service, error) {
	st, err := Open(ctx, db)
	if err != nil {
		return nil, err
	}
	return agentmail.New(st, opts)
}
