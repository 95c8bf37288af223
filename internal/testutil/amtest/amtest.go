// Package amtest opens the agent-mail service on a test store. It is apart
// from testutil so that the tests of packages that use no store do not
// link the storage engines (SQLite, pgx) through testutil.
package amtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
)

// AgentMail opens the agent-mail service on db (migrating its schema),
// closed when the test ends. Open db first (storetest.OpenDSN): cleanups
// run last-registered first, so the service closes before db does, which
// it must (on SQLite it stops the full-text indexer, which writes to db).
//
// Only external test packages (package x_test) of the agent-mail packages
// may use it: this package imports them.
func AgentMail(tb testing.TB, db *store.DB, opts agentmail.Options) *agentmail.Service {
	tb.Helper()
	svc, _ := AgentMailStore(tb, db, opts)
	return svc
}

// AgentMailStore is AgentMail that returns the store too, for the tool
// sets' ports (Channels, Mailboxes).
func AgentMailStore(tb testing.TB, db *store.DB, opts agentmail.Options) (*agentmail.Service, amstore.Store) {
	tb.Helper()
	svc, st, err := amstore.NewServiceStore(context.Background(), db, opts)
	return testutil.Closing(tb, svc, err), st
}

// Store opens the agent-mail store on db (migrating its schema), closed
// when the test ends, for tests of the storage port itself.
func Store(tb testing.TB, db *store.DB) amstore.Store {
	tb.Helper()
	st, err := amstore.Open(context.Background(), db)
	return testutil.Closing(tb, st, err)
}

// ChildAgentMail is for a child process (RunOrChild): it opens the store at
// path and the agent-mail service on it, or ends the process with status 2
// and the reason on stderr.
func ChildAgentMail(ctx context.Context, path string) (*store.DB, *agentmail.Service) {
	db, err := store.Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	svc, err := amstore.NewService(ctx, db, agentmail.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return db, svc
}

// HitIDs are the ids of a search's hits, in their order.
func HitIDs(res agentmail.SearchResult) []int64 {
	var ids []int64
	for _, h := range res.Result {
		ids = append(ids, h.ID)
	}
	return ids
}

// Register ensures project on svc and registers agents in it by name.
func Register(tb testing.TB, svc *agentmail.Service, project string, agents ...string) {
	tb.Helper()
	ctx := context.Background()
	if _, err := svc.EnsureProject(ctx, project); err != nil {
		tb.Fatal(err)
	}
	for _, a := range agents {
		if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: project, Name: a}); err != nil {
			tb.Fatal(err)
		}
	}
}
