package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// A PostgreSQL transaction begun through database/sql costs a round trip
// for its BEGIN before its first statement can be sent: database/sql waits
// for each statement's answer and cannot pipeline. On a send of four round
// trips that is a quarter. A transaction begun on a context marked by
// WithDeferredBegin sends its BEGIN in one pipeline (pgx.Batch) with its
// first statement instead, and costs nothing if it runs none. Nothing else
// changes: a transaction's snapshot is taken at its first statement either
// way, and an advisory lock taken on the connection before BeginTx (see
// agentmail/postgres's writeQueued) still comes before both.

type deferBeginKey struct{}

// WithDeferredBegin marks ctx so that a transaction begun with it on a
// PostgreSQL DB sends its BEGIN with its first statement (see above). On
// SQLite it changes nothing.
func WithDeferredBegin(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferBeginKey{}, true)
}

// deferConnector makes the pool's connections deferConns.
type deferConnector struct{ driver.Connector }

func (c deferConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := dc.(*stdlib.Conn)
	if !ok {
		return dc, nil
	}
	return &deferConn{Conn: sc}, nil
}

// deferConn is pgx's database/sql connection, whose BeginTx defers BEGIN
// when its context asks (WithDeferredBegin). Everything else is stdlib's.
type deferConn struct {
	*stdlib.Conn
	begin string // a BEGIN not yet sent: it goes with the next statement
}

func (c *deferConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if ctx.Value(deferBeginKey{}) == nil {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	begin := "begin"
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		begin += " isolation level read committed"
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		begin += " isolation level repeatable read"
	case sql.LevelSerializable:
		begin += " isolation level serializable"
	default:
		return c.Conn.BeginTx(ctx, opts)
	}
	if opts.ReadOnly {
		begin += " read only"
	}
	c.begin = begin
	return &deferTx{c: c, ctx: ctx}, nil
}

// deferTx ends a transaction begun by deferConn.BeginTx.
type deferTx struct {
	c   *deferConn
	ctx context.Context
}

func (t *deferTx) Commit() error {
	if t.c.begin != "" { // no statement ran: nothing was begun
		t.c.begin = ""
		return nil
	}
	tag, err := t.c.Conn.Conn().Exec(t.ctx, "commit")
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" { // a statement had failed: as pgx's own Commit reports it
		return pgx.ErrTxCommitRollback
	}
	return nil
}

func (t *deferTx) Rollback() error {
	if t.c.begin != "" {
		t.c.begin = ""
		return nil
	}
	// On a context already done pgx closes the connection, which ends the
	// transaction too (and ResetSession refuses a connection still in one).
	_, err := t.c.Conn.Conn().Exec(context.WithoutCancel(t.ctx), "rollback")
	return err
}

// pipelined reports whether a statement with these arguments can follow
// BEGIN in a pgx.Batch: one whose first argument is a pgx option (a query
// mode, result formats, a rewriter) cannot, as a batch takes none.
func pipelined(args []any) bool {
	if len(args) == 0 {
		return true
	}
	switch args[0].(type) {
	case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID, pgx.QueryRewriter:
		return false
	}
	return true
}

func namedArgs(argsV []driver.NamedValue) []any {
	args := make([]any, len(argsV))
	for i, v := range argsV {
		args[i] = v.Value
	}
	return args
}

// sendBegin sends the deferred BEGIN, if any, ahead of query: in one
// pipeline with it (pgx.Batch) when the query can go there, then br holds
// the query's results, BEGIN's answer read; else alone, and br is nil: the
// caller runs the query as stdlib does (so too when no BEGIN is deferred).
func (c *deferConn) sendBegin(ctx context.Context, query string, argsV []driver.NamedValue) (br pgx.BatchResults, err error) {
	if c.begin == "" {
		return nil, nil
	}
	begin := c.begin
	c.begin = ""
	args := namedArgs(argsV)
	if !pipelined(args) {
		if _, err := c.Conn.Conn().Exec(ctx, begin); err != nil {
			return nil, badConn(err)
		}
		return nil, nil
	}
	b := &pgx.Batch{}
	b.Queue(begin)
	b.Queue(query, args...)
	br = c.Conn.Conn().SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, badConn(err)
	}
	return br, nil
}

func (c *deferConn) ExecContext(ctx context.Context, query string, argsV []driver.NamedValue) (driver.Result, error) {
	br, err := c.sendBegin(ctx, query, argsV)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return c.Conn.ExecContext(ctx, query, argsV)
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *deferConn) QueryContext(ctx context.Context, query string, argsV []driver.NamedValue) (driver.Rows, error) {
	br, err := c.sendBegin(ctx, query, argsV)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return c.Conn.QueryContext(ctx, query, argsV)
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	// The first row is read now, as stdlib does, so that the statement's
	// error shows here rather than at the first Next.
	more := rows.Next()
	if err := rows.Err(); err != nil {
		rows.Close()
		br.Close()
		return nil, err
	}
	return &batchRows{rows: rows, br: br, m: c.Conn.Conn().TypeMap(), skip: true, more: more}, nil
}

// badConn is err, or driver.ErrBadConn when nothing was sent (as stdlib
// reports it, so database/sql may try another connection).
func badConn(err error) error {
	if pgconn.SafeToRetry(err) {
		return driver.ErrBadConn
	}
	return err
}

// batchRows are the rows of a statement sent with its BEGIN, as
// database/sql reads them: each column decoded to the driver value pgx's
// codec gives database/sql (as stdlib's own rows do).
type batchRows struct {
	rows       pgx.Rows
	br         pgx.BatchResults
	m          *pgtype.Map
	skip, more bool // the first row was read by QueryContext
	cols       []string
}

func (r *batchRows) Columns() []string {
	if r.cols == nil {
		for _, fd := range r.rows.FieldDescriptions() {
			r.cols = append(r.cols, fd.Name)
		}
	}
	return r.cols
}

func (r *batchRows) Close() error {
	r.rows.Close()
	err := r.rows.Err()
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *batchRows) Next(dest []driver.Value) error {
	more := r.more
	if r.skip {
		r.skip = false
	} else {
		more = r.rows.Next()
	}
	if !more {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	fds := r.rows.FieldDescriptions()
	for i, raw := range r.rows.RawValues() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		raw = append(make([]byte, 0, len(raw)), raw...) // the connection reuses its buffer (and '' is not NULL)
		fd := fds[i]
		t, ok := r.m.TypeForOID(fd.DataTypeOID)
		if !ok {
			dest[i] = string(raw) // unknown types come as text
			continue
		}
		v, err := t.Codec.DecodeDatabaseSQLValue(r.m, fd.DataTypeOID, fd.Format, raw)
		if err != nil {
			return fmt.Errorf("decoding column %s: %w", fd.Name, err)
		}
		dest[i] = v
	}
	return nil
}
