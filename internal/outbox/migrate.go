package outbox

import (
	"context"
	"embed"
	"fmt"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Migrate creates the outbox's tables and its trigger in db if needed. The
// agent-mail schema must have been migrated first: the trigger is on
// am_messages. On a store whose agent-mail migration 0003 already created
// them (every store opened before the outbox had migrations of its own),
// it changes nothing but the migration record. The same migration holds the
// Gmail mirror's records (am_mirror_gmail_*): they were born together, and
// a store's migration history is not rewritten to split them.
func Migrate(ctx context.Context, db *store.DB) error {
	if err := db.MigrateDialect(ctx, "mirror", migrations, "migrations"); err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	return nil
}
