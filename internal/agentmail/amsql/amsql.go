// Package amsql is the SQL that agent mail's two store engines share, with
// the Go around it, written once: agentmail/sqlite and agentmail/postgres
// keep the same tables and columns, so all but a few of their statements
// differ only in their placeholders.
//
// Statements are written with SQLite's placeholders (? in order, or ?N by
// number) and rebound for the engine once, when its Queries are built at
// package initialisation (store.RebindPostgres, which internal/ratelimit,
// the approval ledger and internal/mirror use through store.DB.Rebind),
// never per call: a send runs several of them. A statement whose shape depends on the
// call (optional conditions, a list of search terms) is built piece by piece
// in the engine's placeholders as it goes (see builder), so it is not
// rebound either.
//
// An engine keeps only what truly differs, each place saying why: how a
// transaction runs (SQLite's group commit, PostgreSQL's serializable
// retries and advisory-lock queues), how one statement runs (SQLite's
// statement cache; PostgreSQL's bookkeeping of a failed statement), the
// full-text search (FTS5, tsvector), the one-statement send on PostgreSQL,
// and the fragments its Dialect names. Its transaction type embeds Tx,
// which implements the rest of agentmail.Tx, agentmail.HoldersTx and
// agentmail.AttachmentTx over the engine's Querier.
package amsql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

// Component is the name agent mail's migrations are recorded under, on
// either engine: one store holds one engine's agent-mail schema.
const Component = "agentmail"

// The agent-mail schema, one folder per engine (migrations/sqlite and
// migrations/postgres), as presence and the mirror keep theirs: the engines
// differ in types, indexes and search (FTS5 vs tsvector), so each has its
// own files; which folder applies is db's engine. Applied migrations are
// recorded by component and file name, so the files' folder may move.
//
//go:embed migrations
var migrations embed.FS

// Migrate applies the agent-mail migrations of db's engine.
func Migrate(ctx context.Context, db *store.DB) error {
	if err := db.MigrateDialect(ctx, Component, migrations, "migrations"); err != nil {
		return fmt.Errorf("opening agent-mail store: %w", err)
	}
	return nil
}

// Querier runs one transaction's statements; the engine's transaction
// implements it (SQLite through its prepared statements, PostgreSQL noting
// a failed statement for the commit). Exec and Query report a
// unique-constraint failure as agentmail.ErrConflict (Dialect.MapErr).
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is the answer of Querier.QueryRow: a *sql.Row or an engine's wrapper.
type Row = store.Scanner

// ErrRow is a Row whose statement failed before it ran (SQLite: it could
// not be prepared); Scan reports the failure.
type ErrRow struct{ Err error }

func (r ErrRow) Scan(...any) error { return r.Err }

// Dialect is what the engines' shared statements differ in beyond their
// placeholders. Each engine's value says why its fragments are what they
// are.
type Dialect struct {
	// Numbered: parameters are $1, $2… (PostgreSQL), not ? (SQLite).
	Numbered bool
	// InIDs is the condition that col is one of the ids of the list bound
	// at placeholder ph; IDs renders a list as that parameter.
	InIDs func(col, ph string) string
	IDs   func([]int64) any
	// InStrings and Strings are InIDs and IDs for a list of strings.
	InStrings func(col, ph string) string
	Strings   func([]string) any
	// EachString is a table of one column, value, holding the strings of
	// the list bound at ph (a Strings parameter): one statement inserts a
	// row per string.
	EachString func(ph string) string
	// Greatest is the function returning the largest of its arguments.
	Greatest string
	// Like is the case-insensitive LIKE of the search fallback.
	Like string
	// ThreadJoin joins an agent's copies to a thread's messages in an inbox
	// read of one thread: the thread must drive the join.
	ThreadJoin string
	// AgentName is the condition that am_agents.name equals ? without
	// regard to case, so that the lookup probes the unique index.
	AgentName string
	// Unique reports a unique-constraint failure.
	Unique func(error) bool
}

// MapErr turns a unique-constraint failure into agentmail.ErrConflict,
// keeping the engine's error in the chain (PostgreSQL's store.DB still
// recognises a serialization failure through it).
func (d *Dialect) MapErr(err error) error {
	if err != nil && !errors.Is(err, agentmail.ErrConflict) && d.Unique(err) {
		return fmt.Errorf("%w: %w", agentmail.ErrConflict, err)
	}
	return err
}

// rebind rewrites a statement written with ? placeholders for d.
func (d *Dialect) rebind(query string) string {
	if d.Numbered {
		return store.RebindPostgres(query)
	}
	return query
}

// stmt names a statement of this package: an index into every engine's
// Queries.
type stmt int

// statements are this package's statements, by stmt, as functions of the
// dialect (most ignore it).
var statements []func(d *Dialect) string

// define registers a statement written with ? placeholders.
func define(query string) stmt {
	return defineFor(func(*Dialect) string { return query })
}

// defineFor registers a statement that uses the dialect's fragments.
func defineFor(f func(d *Dialect) string) stmt {
	statements = append(statements, f)
	return stmt(len(statements) - 1)
}

// Queries are the shared statements rebound for one engine.
type Queries struct {
	d     Dialect
	texts []string
	// MsgCols is the message columns (see MsgCols) rebound: its flag is the
	// first parameter of the statement.
	MsgCols string
}

// New builds d's Queries; an engine calls it once, on first use.
func New(d Dialect) *Queries {
	q := &Queries{d: d, texts: make([]string, len(statements)), MsgCols: d.rebind(MsgCols)}
	for i, f := range statements {
		q.texts[i] = d.rebind(f(&q.d))
	}
	return q
}

// Tx implements the shared part of agentmail.Tx (and HoldersTx,
// AttachmentTx) on an engine's Querier. The engine's transaction embeds it
// and adds the methods that differ.
type Tx struct {
	q   Querier
	sql *Queries
}

// NewTx returns the shared methods over q, with the engine's Queries.
func NewTx(q Querier, qs *Queries) Tx { return Tx{q: q, sql: qs} }

// text returns s's text for this engine.
func (t *Tx) text(s stmt) string { return t.sql.texts[s] }

func (t *Tx) exec(ctx context.Context, s stmt, args ...any) (sql.Result, error) {
	return t.q.Exec(ctx, t.text(s), args...)
}

func (t *Tx) query(ctx context.Context, s stmt, args ...any) (*sql.Rows, error) {
	return t.q.Query(ctx, t.text(s), args...)
}

func (t *Tx) queryRow(ctx context.Context, s stmt, args ...any) Row {
	return t.q.QueryRow(ctx, t.text(s), args...)
}

// insertID runs an INSERT … RETURNING id and sets *id to the new row's.
func (t *Tx) insertID(ctx context.Context, id *int64, s stmt, args ...any) error {
	var n int64
	if err := t.queryRow(ctx, s, args...).Scan(&n); err != nil {
		return t.sql.d.MapErr(err)
	}
	*id = n
	return nil
}

// builder builds a statement whose shape depends on the call, naming each
// parameter in the engine's placeholders as it is added.
type builder struct {
	strings.Builder
	numbered bool
	args     []any
}

// build starts a statement whose first parameters are args (the flag of
// MsgCols comes first).
func (t *Tx) build(args ...any) *builder {
	return &builder{numbered: t.sql.d.Numbered, args: args}
}

// arg adds a parameter and returns its placeholder.
func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	if !b.numbered {
		return "?"
	}
	return "$" + strconv.Itoa(len(b.args))
}

// query runs the statement built.
func (b *builder) query(ctx context.Context, t *Tx) (*sql.Rows, error) {
	return t.q.Query(ctx, b.String(), b.args...)
}

// NotFound maps sql.ErrNoRows to agentmail.ErrNotFound.
func NotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return agentmail.ErrNotFound
	}
	return err
}

// US stores a time as microseconds (NULL for the zero time).
func US(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// Time scans a column stored by US into *t (the zero time for NULL).
func Time(t *time.Time) sql.Scanner { return usTime{t} }

type usTime struct{ t *time.Time }

func (u usTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*u.t = time.Time{}
	case int64:
		*u.t = time.UnixMicro(v).UTC()
	default:
		return fmt.Errorf("reading a time: the column holds %T, not microseconds", src)
	}
	return nil
}

// FromUS reads a time stored by US.
func FromUS(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

// NullStr stores "" as NULL.
func NullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// NullID stores the id 0 as NULL.
func NullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
