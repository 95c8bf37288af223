package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"

	"github.com/mailgate/mailgate/internal/retry"
)

// sqliteConnector opens the SQLite store's connections. Each is given the
// store's settings (sqliteSettings) as it opens, except the first, which
// openSQLite checks before anything is written to the file (checkFirst).
type sqliteConnector struct {
	driver.Connector
	checked atomic.Bool // the first connection passed verifySQLite and has the settings
}

// sqliteSettings are the store's connection settings beyond the busy
// timeout, in the order the driver ran them when they were in the DSN:
// foreign keys enforced, WAL (written into the file's header, so a
// refused file must never get it), and synchronous=NORMAL, which in WAL
// mode syncs at checkpoints only.
var sqliteSettings = []string{"pragma foreign_keys(ON)", "pragma journal_mode(WAL)", "pragma synchronous(NORMAL)"}

func (c *sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil || !c.checked.Load() {
		return dc, err
	}
	if err := setUpSQLite(ctx, dc); err != nil {
		dc.Close()
		return nil, err
	}
	return dc, nil
}

// checkFirst opens db's first connection, checks the store on it
// (verifySQLite) and then gives it the settings every later connection
// gets as it opens. Every SQLite connection parses the whole schema on its
// first statement; the check used to have a connection of its own.
func (c *sqliteConnector) checkFirst(ctx context.Context, db *sql.DB, path string) error {
	first, err := db.Conn(ctx)
	if err == nil {
		err = verifySQLite(ctx, first, path)
	}
	if err != nil {
		if first != nil {
			first.Close()
		}
		return fmt.Errorf("opening store: %w", err)
	}
	defer first.Close()
	// A store created before stores were made in WAL mode is switched by its
	// first connection; two processes switching it at once is the deadlock
	// SQLite answers with SQLITE_BUSY at once. The loser retries: the winner
	// has switched it by then.
	err = retry.Do(ctx, txRetry, IsBusy, func() error {
		return first.Raw(func(dc any) error { return setUpSQLite(ctx, dc) })
	})
	if err != nil {
		return fmt.Errorf("opening store %s: %w", path, err)
	}
	c.checked.Store(true)
	return nil
}

// setUpSQLite runs sqliteSettings on a new connection.
func setUpSQLite(ctx context.Context, dc any) error {
	ex, ok := dc.(driver.ExecerContext)
	if !ok {
		return fmt.Errorf("the SQLite driver's connection %T cannot run statements", dc)
	}
	for _, s := range sqliteSettings {
		if _, err := ex.ExecContext(ctx, s, nil); err != nil {
			return err
		}
	}
	return nil
}
