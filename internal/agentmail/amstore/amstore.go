// Package amstore opens the agent-mail store implementation that matches the
// state store's engine: agentmail/sqlite on a SQLite file, agentmail/postgres
// on a PostgreSQL database. Both apply their own embedded migrations.
package amstore

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/agentmail/postgres"
	"github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
)

// Store is an engine's agent-mail store: the core's port, and the storage
// ports of the tool sets beside the core, on the same database. The
// engines know nothing of the sets: each implements the core's port and
// amsql.Runner, on which this package wires the sets' ports (each set's
// SQLStore).
type Store interface {
	agentmail.Store
	// Channels is the channels set's port (agentmail/channels).
	Channels() channels.Store
	// Mailboxes is the mailbox set's port (agentmail/mailboxset).
	Mailboxes() mailboxset.Store
}

// engine is what each engine implements (checked here, at compile time).
type engine interface {
	agentmail.Store
	amsql.Runner
}

var (
	_ engine = (*sqlite.Store)(nil)
	_ engine = (*postgres.Store)(nil)
)

// sets adds the tool sets' ports to an engine.
type sets struct{ r amsql.Runner }

func (s sets) Channels() channels.Store    { return channels.SQLStore(s.r) }
func (s sets) Mailboxes() mailboxset.Store { return mailboxset.SQLStore(s.r) }

// The engines' stores with the sets: embedding the engine keeps all of its
// methods (the core asks a store for optional ones, such as
// agentmail.ScopedWriter).
type (
	sqliteStore struct {
		*sqlite.Store
		sets
	}
	postgresStore struct {
		*postgres.Store
		sets
	}
)

// Open migrates the agent-mail schema on db and returns its store. The
// caller keeps ownership of db.
func Open(ctx context.Context, db *store.DB) (Store, error) {
	if db.Dialect == store.Postgres {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return postgresStore{st, sets{st}}, nil
	}
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	return sqliteStore{st, sets{st}}, nil
}

// NewService opens the store on db and builds the Service over it.
func NewService(ctx context.Context, db *store.DB, opts agentmail.Options) (*agentmail.Service, error) {
	svc, _, err := NewServiceStore(ctx, db, opts)
	return svc, err
}

// NewServiceStore is NewService also returning the store, whose tool set
// ports (Channels, Mailboxes) serve the channels and mailbox sets.
func NewServiceStore(ctx context.Context, db *store.DB, opts agentmail.Options) (*agentmail.Service, Store, error) {
	st, err := Open(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	svc, err := agentmail.New(st, opts)
	if err != nil {
		return nil, nil, err
	}
	return svc, st, nil
}
