// Package postgres stores agent mail in a PostgreSQL database shared by
// mailgate servers on many hosts. (Skeleton: being written.)
package postgres

import (
	"context"
	"errors"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

// Open applies the agent-mail migrations to db and returns the store.
func Open(ctx context.Context, db *store.DB) (agentmail.Store, error) {
	return nil, errors.New("agent-mail on PostgreSQL: not implemented yet")
}
