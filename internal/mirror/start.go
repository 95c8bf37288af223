package mirror

import (
	"context"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
)

// StartGmail starts the Gmail mirror of the agent mail msgs reads into mb
// (outbox.Start with a GmailSink).
func StartGmail(ctx context.Context, db *store.DB, msgs outbox.Messages, mb Mailbox, lease time.Duration, o outbox.WorkerOptions) (func() error, error) {
	stop, err := outbox.Start(ctx, db, &GmailSink{DB: db, Messages: msgs, Mailbox: mb}, lease, o)
	if err != nil {
		return nil, fmt.Errorf("starting the Gmail mirror: %w", err)
	}
	return stop, nil
}
