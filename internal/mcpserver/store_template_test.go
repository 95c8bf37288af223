package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/drafts"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/schedule"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// testStores is the store every test of the package opens: the agent-mail
// schema and the email tools' (approval ledger, limits, drafts, schedule),
// migrated once per test process and copied per test on SQLite (the
// migrations and the file's creation were ~1.2 of the package's ~7.4 CPU
// seconds). The tools find every migration applied, as a server started on
// an existing home does; the migrations are tested in their packages.
var testStores = storetest.NewTemplate(func(ctx context.Context, db *store.DB) error {
	if err := amtest.Migrate(ctx, db); err != nil {
		return err
	}
	if _, err := approval.NewStoreLedger(ctx, db); err != nil {
		return err
	}
	if _, err := ratelimit.New(ctx, db, 1, time.Hour); err != nil {
		return err
	}
	if _, err := drafts.New(ctx, db); err != nil {
		return err
	}
	_, err := schedule.New(ctx, db)
	return err
})

// testDSN is what MAILGATE_DB would hold for a new store of this package's
// tests: on SQLite a copy of testStores, on PostgreSQL a new schema
// (storetest.DSN). Several services opened on it share the store, as
// several processes do.
func testDSN(t testing.TB) string {
	t.Helper()
	return testStores.DSN(t)
}
