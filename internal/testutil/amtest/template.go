package amtest

import (
	"context"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// DB opens a new store that already holds the agent-mail schema (see
// DSN), closed when the test ends.
func DB(tb testing.TB) *store.DB {
	tb.Helper()
	return storetest.OpenDSN(tb, DSN(tb))
}

// DSN is storetest.DSN for a store the agent-mail migrations have already
// run on: on SQLite a copy of one store migrated once per test process
// (the migrations cost ~10 ms of CPU and a package's tests open dozens of
// stores), on PostgreSQL a new schema, migrated when the service opens it.
// Opening the service on it runs the migrations' check, which finds every
// one applied. For tests of the service, not of the migrations.
func DSN(tb testing.TB) string {
	tb.Helper()
	return template.DSN(tb)
}

// SQLite is the path of a copy of the migrated SQLite store, whatever the
// engine of the run, for tests of the SQLite engine itself.
func SQLite(tb testing.TB) string {
	tb.Helper()
	return template.SQLite(tb)
}

// template is a SQLite store with the agent-mail schema.
var template = storetest.NewTemplate(Migrate)

// Migrate runs the agent-mail migrations on db, for a package's own
// template (storetest.NewTemplate) of a store that also holds other
// components.
func Migrate(ctx context.Context, db *store.DB) error {
	st, err := amstore.Open(ctx, db)
	if err != nil {
		return err
	}
	return st.Close()
}
