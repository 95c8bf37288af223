// Package store opens mailgate's state store: one SQLite file shared by every
// mailgate process on the machine (each agent's client may start its own), or
// one PostgreSQL database shared by mailgate servers on many hosts.
//
// The store is deliberately small: it owns the connection settings that make
// several processes safe on one store (on SQLite: WAL, a busy timeout,
// immediate write transactions; on PostgreSQL: a bounded pool and
// serializable write transactions, see postgres.go), one way to run a write
// transaction with the retries each engine needs (Write), and a migration
// runner. Each component that keeps state
// (the send limiter, the agent-mail core, …) owns its own schema and hands its
// embedded migrations to Migrate under its own component name, so components
// never know about one another's tables.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/store/dsn"
	"modernc.org/sqlite" // the "sqlite" driver (pure Go, no cgo)
)

// BusyTimeout is how long a connection waits for another process's write lock
// before SQLite gives up with SQLITE_BUSY. Writers hold the lock for
// milliseconds, so a generous value means no lock error reaches an agent.
const BusyTimeout = 30 * time.Second

// Dialect is the engine behind a DB.
type Dialect uint8

const (
	SQLite Dialect = iota
	Postgres
)

// String names the dialect as its migration folders do.
func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// DB is an open state store.
type DB struct {
	*sql.DB
	// Dialect is the engine: SQL that differs between engines switches on it.
	Dialect Dialect
	// Path is the absolute path of the SQLite file ("" on PostgreSQL).
	Path string
	// Where names the store for messages: the SQLite path, or the
	// PostgreSQL URL without its password.
	Where string
	// Fresh is set when the store held no migration when it was opened: a
	// SQLite file this Open created, or a new PostgreSQL database. Beside
	// a vault with history, that history is not in it (cmd/mailgate says
	// so, and rebuilds the send-limit history from the audit log).
	Fresh bool
}

// IsPostgres reports whether dsn selects PostgreSQL rather than a SQLite
// file path (dsn.IsPostgres, where the rule lives).
func IsPostgres(s string) bool { return dsn.IsPostgres(s) }

// Open opens the store dsn names: a PostgreSQL URL or keyword/value string
// opens PostgreSQL (see openPostgres); anything else is the path of a
// SQLite file.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	return openSQLite(ctx, dsn)
}

// openSQLite opens (creating it and its folder if needed) the SQLite store at
// path. path must be absolute; ":memory:" is refused because separate
// connections would see separate databases.
func openSQLite(ctx context.Context, path string) (*DB, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("opening store: path %q is not absolute", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening store: %w", err)
	}
	missing, err := checkExisting(path)
	if err != nil {
		return nil, fmt.Errorf("opening store: %w", err)
	}
	if missing {
		if err := createSQLite(ctx, path); err != nil {
			return nil, fmt.Errorf("creating store %s: %w", path, err)
		}
	}
	if err := ownerOnly(path); err != nil {
		return nil, fmt.Errorf("opening store: %w", err)
	}
	// The store's first connection is opened with the busy timeout and the
	// transaction mode only, checked (verifySQLite), and only then given the
	// settings that write to the file (journal_mode rewrites its header), so
	// a refused file is left exactly as found. (The check had a connection
	// of its own, which parsed the whole schema once more: 7% of a server's
	// start.)
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	// BEGIN IMMEDIATE takes the write lock up front, so two processes never
	// deadlock upgrading read transactions (which SQLite answers with BUSY at
	// once, ignoring the busy timeout).
	q.Set("_txlock", "immediate")
	base, err := sqlite.NewConnector("file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	conns := &sqliteConnector{Connector: base}
	sqldb := sql.OpenDB(conns)
	// Each connection is a file handle; a handful is plenty for one process and
	// keeps descriptor use flat however long the process lives.
	sqldb.SetMaxOpenConns(8)
	sqldb.SetMaxIdleConns(8)
	if err := conns.checkFirst(ctx, sqldb, path); err != nil {
		sqldb.Close()
		return nil, err
	}
	db := &DB{DB: sqldb, Dialect: SQLite, Path: path, Where: path}
	if db.Fresh, err = db.fresh(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	return db, nil
}

// ownerOnly creates the SQLite file at path with mode 0600 when it does not
// exist, and takes group and other permissions off one that does (with its
// -wal and -shm files). The store holds agents' messages and the approval
// ledger: no other user of the machine may read it. SQLite creates the -wal
// and -shm files with the database file's mode, so they follow. The umask
// can only narrow 0600; a file owned by another user is left as it is (its
// owner decides).
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		os.Chmod(p, fi.Mode().Perm()&^0o077) // EPERM on another user's file: left alone
	}
	return nil
}

// Migrate applies the *.sql files of fsys (top level, in lexical order) that
// have not been applied yet for component. Each file runs in its own
// transaction together with its bookkeeping row, so a crash leaves either the
// whole migration or none of it, and concurrent processes apply it once.
// fsys holds the files of db's dialect (see MigrationsFor).
func (db *DB) Migrate(ctx context.Context, component string, fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("migrating %s: %w", component, err)
	}
	sort.Strings(names)
	// Most starts find everything applied: check that with a plain read, so
	// a process start takes no write lock (another process may hold it).
	applied, err := db.applied(ctx, component)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", component, err)
	}
	for _, name := range names {
		if applied[name] {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("migrating %s: %w", component, err)
		}
		if err := db.applyMigration(ctx, component, name, string(body)); err != nil {
			return fmt.Errorf("migrating %s %s: %w", component, name, err)
		}
	}
	return nil
}

// MigrationsFor returns the folder of fsys holding db's dialect's migrations:
// dir/sqlite or dir/postgres. Components whose SQL is shared between engines
// keep their schema in these two folders.
func (db *DB) MigrationsFor(fsys fs.FS, dir string) (fs.FS, error) {
	return fs.Sub(fsys, dir+"/"+db.Dialect.String())
}

func (db *DB) applied(ctx context.Context, component string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT version FROM schema_migrations WHERE component = ?`), component)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	done := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		done[v] = true
	}
	return done, rows.Err()
}

// applyMigration applies one file unless another process did it first
// (checked again under the write lock).
func (db *DB) applyMigration(ctx context.Context, component, version, body string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if db.Dialect == Postgres {
		// Servers starting together on one database take turns: the check
		// below then sees the other's migration.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx,
		db.Rebind(`SELECT count(*) FROM schema_migrations WHERE component = ? AND version = ?`),
		component, version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	// The driver runs every statement of a multi-statement Exec.
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		db.Rebind(`INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)`),
		component, version, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	return tx.Commit()
}

// IsBusy reports whether err is SQLite's "database is locked" (SQLITE_BUSY),
// which can still surface after the busy timeout under extreme contention.
func IsBusy(err error) bool {
	if err == nil {
		return false
	}
	var coder interface{ Code() int }
	if errors.As(err, &coder) {
		// Primary result code in the low byte: 5 = SQLITE_BUSY, 6 = SQLITE_LOCKED.
		c := coder.Code() & 0xff
		return c == 5 || c == 6
	}
	return strings.Contains(err.Error(), "database is locked")
}
