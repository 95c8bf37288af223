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
)

// The tests' stores are copies of templates migrated once per test process
// (the stores' creation and migrations were ~1.2 of the package's ~7.4 CPU
// seconds): the agent-mail sets' stores of amtest's (amtest.DSN, or
// amtest.SQLite where a test wants SQLite whatever the engine), the email
// set's of emailStores. Each holds only its set's schema: every new
// connection parses the whole schema, the store's check at open too. The
// tools find every migration applied, as a server started on an existing
// home does; the migrations are tested in their packages.

// emailStores is the template of the email tool set's stores: the approval
// ledger, the send and organise limits, mailgate's drafts, the schedule.
var emailStores = storetest.NewTemplate(func(ctx context.Context, db *store.DB) error {
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

// emailDSN is what MAILGATE_DB would hold for a new store of the email
// tools: on SQLite a copy of emailStores, on PostgreSQL a new schema
// (storetest.DSN). Several servers opened on it share the store, as
// several processes do.
func emailDSN(t testing.TB) string {
	t.Helper()
	return emailStores.DSN(t)
}
