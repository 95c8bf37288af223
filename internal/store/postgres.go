package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/mailgate/mailgate/internal/store/dsn"
)

// Pool bounds for PostgreSQL. Every mailgate server holds at most
// PoolMaxConns connections (the URL's pool_max_conns parameter, as pgxpool
// reads it, changes that): a fleet of N servers needs N×PoolMaxConns of the
// server's max_connections (100 by default), so the bound is what lets a
// dozen servers share one stock PostgreSQL. Transactions are short (a send is
// a handful of statements), so a few connections keep a busy server's cores
// fed; calls beyond that queue in the pool rather than on the database.
const (
	PoolMaxConns    = 16
	PoolMaxLifetime = 30 * time.Minute // recycled, so a failover or a pgbouncer restart heals
	PoolMaxIdleTime = 5 * time.Minute
	// connectTimeout bounds each connection attempt when the URL sets none,
	// so an unreachable host fails a start or a readiness probe in seconds.
	connectTimeout = 5 * time.Second
)

// migrateLockKey is the advisory lock servers take to apply migrations one at
// a time ("mailgate" in ASCII).
const migrateLockKey int64 = 0x6d61696c67617465

// openPostgres opens the PostgreSQL database conn names (a postgres:// URL
// or a keyword/value string). One that does not parse is refused before any
// connection is tried, with the parser's reason (never the password); an
// unreachable server fails the start with the address.
func openPostgres(ctx context.Context, conn string) (*DB, error) {
	cfg, err := dsn.Parse(conn)
	if err != nil {
		return nil, fmt.Errorf("opening store: MAILGATE_DB %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	maxConns, err := poolMaxConns(cfg)
	if err != nil {
		return nil, fmt.Errorf("opening store: MAILGATE_DB: %w", err)
	}
	where := redacted(cfg)
	sqldb := sql.OpenDB(deferConnector{stdlib.GetConnector(*cfg)}) // see WithDeferredBegin
	sqldb.SetMaxOpenConns(maxConns)
	// As many kept idle as may be open: with fewer (8 did), a busy server
	// closed each connection returned beyond them and opened another a
	// moment later (7 a second at 30 clients), a PostgreSQL backend to fork
	// and its statements to prepare again every time. Idle ones are still
	// closed after PoolMaxIdleTime.
	sqldb.SetMaxIdleConns(maxConns)
	sqldb.SetConnMaxLifetime(PoolMaxLifetime)
	sqldb.SetConnMaxIdleTime(PoolMaxIdleTime)
	db := &DB{DB: sqldb, Dialect: Postgres, Where: where}
	if err := sqldb.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("opening store: PostgreSQL at %s: %w", where, err)
	}
	// Servers starting together would race CREATE TABLE IF NOT EXISTS (it is
	// not atomic on PostgreSQL): the advisory lock orders them.
	err = db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			component  TEXT NOT NULL,
			version    TEXT NOT NULL,
			applied_at TEXT NOT NULL,
			PRIMARY KEY (component, version))`)
		return err
	})
	if err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("opening store: PostgreSQL at %s: %w", where, err)
	}
	if db.Fresh, err = db.fresh(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("opening store: PostgreSQL at %s: %w", where, err)
	}
	return db, nil
}

// poolMaxConns takes the pool_max_conns parameter out of cfg (pgx would send
// it to the server as a setting, which refuses it) and returns the pool
// bound: that value, or PoolMaxConns.
func poolMaxConns(cfg *pgx.ConnConfig) (int, error) {
	v, ok := cfg.RuntimeParams["pool_max_conns"]
	if !ok {
		return PoolMaxConns, nil
	}
	delete(cfg.RuntimeParams, "pool_max_conns")
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("pool_max_conns=%q is not a whole number of connections, 1 or more", v)
	}
	return n, nil
}

// redacted names the database without credentials: user@host:port/db.
func redacted(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if len(host) > 0 && host[0] != '/' {
		host = net.JoinHostPort(host, strconv.Itoa(int(cfg.Port)))
	}
	return "postgres://" + cfg.User + "@" + host + "/" + cfg.Database
}

// pgRetryable reports PostgreSQL's serialization failure and deadlock
// (SQLSTATE 40001, 40P01): the transaction lost a race and may simply run
// again.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

// IsUniqueViolation reports a unique-constraint failure on either engine.
func IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var coder interface{ Code() int }
	if errors.As(err, &coder) {
		// SQLITE_CONSTRAINT_UNIQUE (2067) and SQLITE_CONSTRAINT_PRIMARYKEY (1555).
		c := coder.Code()
		return c == 2067 || c == 1555
	}
	return false
}

// Describe names the store dsn selects for logs and messages: a SQLite path
// as is, a PostgreSQL URL or keyword/value string as
// postgres://user@host:port/db, without its password.
func Describe(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "postgres://(unparsable connection string)"
	}
	return redacted(cfg)
}
