package main

import (
	"context"
	"sync"

	"github.com/mailgate/mailgate/internal/store"
)

// A one-shot command such as `mailgate approvals` reads the store in
// several places (the ledger, the schedule, the store's age, the live
// servers, the send slots), and each opened it: an opening checks the
// whole file (its schema, SQLite's quick_check) and the last closing
// checkpoints it, most of the command's CPU after Go's start. A command
// that puts a storeSet in its context (withStoreSet) has each store opened
// once, by the first openStore, and closed when the command ends.

type storeSet struct {
	mu     sync.Mutex
	opened map[string]*store.DB // by DSN
}

type storeSetKey struct{}

// withStoreSet is ctx with a storeSet, and the function that closes the
// stores opened through it.
func withStoreSet(ctx context.Context) (context.Context, func()) {
	set := &storeSet{opened: map[string]*store.DB{}}
	return context.WithValue(ctx, storeSetKey{}, set), func() {
		set.mu.Lock()
		defer set.mu.Unlock()
		for dsn, db := range set.opened {
			db.Close()
			delete(set.opened, dsn)
		}
	}
}

// openStore opens the store dsn names (store.Open) and returns the
// function that releases it: closes it, or, under withStoreSet, leaves it
// open for the command's other readers. A failed opening is not kept: the
// next reader tries again, as each did before.
func openStore(ctx context.Context, dsn string) (*store.DB, func(), error) {
	set, _ := ctx.Value(storeSetKey{}).(*storeSet)
	if set == nil {
		db, err := store.Open(ctx, dsn)
		if err != nil {
			return nil, func() {}, err
		}
		return db, func() { db.Close() }, nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	if db := set.opened[dsn]; db != nil {
		return db, func() {}, nil
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, func() {}, err
	}
	set.opened[dsn] = db
	return db, func() {}, nil
}
