package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A store that lost its history must never be replaced silently: the
// send-limit history, the approval ledger and the agents' mail live in it.
// The original code opened whatever it found, and SQLite turns a 0-byte
// file into a new empty database: a truncated state.db started as a fresh
// store (rc 0, ready), and one with damaged pages started and failed every
// send later with "database disk image is malformed". So an existing file is
// checked before anything is written to it, and a store is created only
// where no file exists, atomically (createSQLite), so that a 0-byte file is
// always damage, never a first start interrupted.

// DamagedError refuses a SQLite store file that exists but cannot be trusted:
// empty, not an SQLite database, without mailgate's schema, or failing
// SQLite's quick_check. Its text says what was found and what to do.
type DamagedError struct {
	Path    string
	Problem string // "is empty (0 bytes)", …
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the store %s %s. mailgate does not start on it, nor replace it with a new empty store: "+
		"it holds the send-limit history, the approval ledger and the agents' mail. "+
		"Restore it from a backup; or, to start with a new store, move it aside (mv %s %s.broken) "+
		"and start again: a new store is created, the send-limit history is rebuilt from the audit log, "+
		"and the approval ledger and agent mail start empty",
		e.Path, e.Problem, e.Path, e.Path)
}

// checkExisting refuses a file at path that is empty or not a regular file
// before SQLite opens it (SQLite would take a 0-byte file for a new
// database). It reports whether the file is missing.
func checkExisting(path string) (missing bool, err error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		return false, &DamagedError{Path: path, Problem: "is not a regular file"}
	case fi.Size() == 0:
		// A -wal beside it may hold pages, but without the main file's
		// header SQLite cannot use them: still a lost store.
		return false, &DamagedError{Path: path, Problem: "is empty (0 bytes)"}
	}
	return false, nil
}

// quickCheckMax is the largest store whose every page quick_check reads at
// each start. quick_check is a scan of every page: milliseconds for a store of
// a few MiB, but 35-100 s for an agent-mail store of a million messages
// (645 MiB-1 GiB), which a client starting the server would not wait for.
// Above it, a start checks what a replaced or foreign file would fail (the
// header, the schema); `mailgate doctor` runs the full check at any size.
const quickCheckMax = 256 << 20

// verifySQLite checks an open SQLite store on its connection c: it is an
// SQLite database, it has mailgate's schema_migrations table, and (up to
// quickCheckMax) quick_check finds no damaged page.
func verifySQLite(ctx context.Context, c *sql.Conn, path string) error {
	var n int
	err := c.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n)
	if err != nil {
		if isNotADB(err) {
			return &DamagedError{Path: path, Problem: "is not an SQLite database (" + err.Error() + ")"}
		}
		if isCorrupt(err) {
			return &DamagedError{Path: path, Problem: "is damaged (" + err.Error() + ")"}
		}
		return err
	}
	if n == 0 {
		return &DamagedError{Path: path, Problem: "is an SQLite database without mailgate's schema (no schema_migrations table): it is not a mailgate store"}
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > quickCheckMax {
		return nil
	}
	// quick_check constructs the full-text tables (FTS5 checks itself), and
	// a server starting beside this one may be migrating them: its commit
	// between this connection's reads is SQLITE_SCHEMA ("database schema has
	// changed: vtable constructor failed"), which refused the store and ended
	// the server when two started together on a new home. The check is run
	// again on the new schema.
	for range 10 {
		err = quickCheck(ctx, c, path)
		if sqliteCode(err) != sqliteSchema {
			break
		}
	}
	return err
}

// sqliteSchema is SQLITE_SCHEMA: the schema changed under a statement.
const sqliteSchema = 17

// quickCheck runs SQLite's quick_check on c (the store at path).
func quickCheck(ctx context.Context, c *sql.Conn, path string) error {
	rows, err := c.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		if isCorrupt(err) || isNotADB(err) {
			return &DamagedError{Path: path, Problem: "is damaged (" + err.Error() + ")"}
		}
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		if isCorrupt(err) || isNotADB(err) {
			return &DamagedError{Path: path, Problem: "is damaged (" + err.Error() + ")"}
		}
		return err
	}
	if len(problems) > 0 {
		return &DamagedError{Path: path, Problem: "is damaged (SQLite's quick_check: " + strings.Join(problems, "; ") + ")"}
	}
	return nil
}

// sqliteCode is the primary result code of a SQLite error, -1 for others.
func sqliteCode(err error) int {
	var coder interface{ Code() int }
	if errors.As(err, &coder) {
		return coder.Code() & 0xff
	}
	return -1
}

func isNotADB(err error) bool  { return sqliteCode(err) == 26 } // SQLITE_NOTADB
func isCorrupt(err error) bool { return sqliteCode(err) == 11 } // SQLITE_CORRUPT

// createSQLite creates the store at path with its schema_migrations table,
// atomically: the database is built under a temporary name beside it and
// linked into place only when whole, so a process killed while creating
// leaves no 0-byte state.db (which the next start would rightly refuse). Of
// several processes creating the store at once, one link wins; the others
// use its file.
func createSQLite(ctx context.Context, path string) error {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new-"+hex.EncodeToString(b[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(tmp)
	sqldb, err := sql.Open("sqlite", "file:"+(&url.URL{Path: tmp}).EscapedPath())
	if err != nil {
		return err
	}
	// Created in WAL mode (kept in the file's header): the store's
	// connections would switch it on first use, and two servers starting
	// together on a new home would both read the file and then both ask for
	// the write lock to switch it, a deadlock SQLite answers with SQLITE_BUSY
	// at once, whatever the busy timeout. synchronous=OFF: SQLite's own
	// fsyncs (nine, of its journal, WAL, file and folder) would make no
	// file durable that syncFile below does not; the name is linked into
	// place only after that, so a crash before it leaves only a temporary.
	_, err = sqldb.ExecContext(ctx, `PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL; `+schemaMigrationsSQLite)
	if cerr := sqldb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncFile(filepath.Dir(path))
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) { // a folder on some platforms
		return err
	}
	return nil
}

const schemaMigrationsSQLite = `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT NOT NULL,
		version   TEXT NOT NULL,
		applied_at TEXT NOT NULL,
		PRIMARY KEY (component, version))`

// fresh reports whether the store holds no migration yet: it was just
// created (or is a new PostgreSQL database), so whatever history the vault
// and the audit log hold is not in it.
func (db *DB) fresh(ctx context.Context) (bool, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		return false, err
	}
	return n == 0, nil
}

// CreatedAt is when the store's first migration was applied: when this
// store began keeping history (zero if it holds none yet).
func (db *DB) CreatedAt(ctx context.Context) (time.Time, error) {
	var s sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT min(applied_at) FROM schema_migrations`).Scan(&s); err != nil {
		return time.Time{}, err
	}
	if !s.Valid {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s.String)
}
