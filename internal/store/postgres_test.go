package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

func TestRebindPostgres(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE x = ? AND y = ?`, `SELECT a FROM t WHERE x = $1 AND y = $2`},
		{`WHERE s = ?1 AND n <= ?2 AND m > ?2 LIMIT ?3`, `WHERE s = $1 AND n <= $2 AND m > $2 LIMIT $3`},
		{`SELECT '?' , "a?b", ?`, `SELECT '?' , "a?b", $1`},
		{`VALUES (?, 'it''s ?', ?)`, `VALUES ($1, 'it''s ?', $2)`},
	} {
		if got := store.RebindPostgres(tc.in); got != tc.want {
			t.Errorf("RebindPostgres(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A URL that does not parse fails at once, naming the variable and without
// echoing the password.
func TestOpenBadPostgresURL(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://u:secret@host:notaport/db",
		"postgres://u:secret@[::1/db",
		"postgresql://u:secret@127.0.0.1:5432/db?sslmode=bogus",
		"postgres://u:secret@127.0.0.1:5432/db?pool_max_conns=0",
		"postgres://u:secret@127.0.0.1:5432/db?pool_max_conns=many",
	} {
		_, err := store.Open(ctx, dsn)
		if err == nil {
			t.Errorf("%s: accepted", dsn)
			continue
		}
		if !strings.Contains(err.Error(), "MAILGATE_DB") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", dsn, err)
		}
	}
}

// An unreachable server fails the start within the connect timeout, naming
// the address but not the password.
func TestOpenUnreachablePostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	_, err := store.Open(ctx, "postgres://u:secret@127.0.0.1:1/db?sslmode=disable")
	if err == nil {
		t.Fatal("opened a store on a closed port")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1/db") || strings.Contains(err.Error(), "secret") {
		t.Errorf("error: %v", err)
	}
	t.Logf("failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
}

func pgOnly(t *testing.T) {
	if storetest.PostgresURL() == "" {
		t.Skip("needs " + storetest.EnvPostgres + " (make test sets it)")
	}
}

// pool_max_conns in the URL bounds the pool (as pgxpool reads it) and is
// not sent to the server, which would refuse it as an unknown setting.
func TestPostgresPoolMaxConns(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	dsn := storetest.DSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db := storetest.OpenDSN(t, dsn+sep+"pool_max_conns=3")
	if got := db.Stats().MaxOpenConnections; got != 3 {
		t.Errorf("MaxOpenConnections = %d, want 3", got)
	}
	var one int
	if err := db.QueryRow(`SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("query on the bounded pool: %d, %v", one, err)
	}
	if got := storetest.OpenDSN(t, dsn).Stats().MaxOpenConnections; got != store.PoolMaxConns {
		t.Errorf("without the parameter MaxOpenConnections = %d, want %d", got, store.PoolMaxConns)
	}
}

// Servers starting together on one database apply each migration once.
func TestPostgresMigrateConcurrently(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	dsn := storetest.DSN(t)
	fsys := fstest.MapFS{
		"0001_init.sql": {Data: []byte(`CREATE TABLE a (x BIGINT);
CREATE TABLE b (y BIGINT);`)},
		"0002_more.sql": {Data: []byte(`ALTER TABLE a ADD COLUMN z TEXT;`)},
	}
	store.MigrateConcurrently(t, dsn, fsys, 6)
	db := storetest.OpenDSN(t, dsn)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE component = 'test'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("migrations recorded: %d, %v", n, err)
	}
	if _, err := db.Exec(`INSERT INTO a (x, z) VALUES (1, 'ok')`); err != nil {
		t.Fatal(err)
	}
}

// Write retries serialization failures: many read-modify-write
// transactions on one row from two pools (two "servers") all land.
func TestPostgresWriteRetriesSerializationFailures(t *testing.T) {
	t.Parallel()
	pgOnly(t)
	ctx := context.Background()
	dsn := storetest.DSN(t)
	a, b := storetest.OpenDSN(t, dsn), storetest.OpenDSN(t, dsn)
	if _, err := a.Exec(`CREATE TABLE counter (n BIGINT NOT NULL); INSERT INTO counter VALUES (0)`); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 10
	var retried atomic.Int64
	var wg sync.WaitGroup
	for i := range workers {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				attempts := 0
				err := db.Write(ctx, func(tx *sql.Tx) error {
					attempts++
					var n int64
					if err := tx.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE counter SET n = $1`, n+1)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				retried.Add(int64(attempts - 1))
			}
		}()
	}
	wg.Wait()
	var n int64
	if err := a.QueryRow(`SELECT n FROM counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != workers*each {
		t.Fatalf("counter = %d, want %d (a lost update)", n, workers*each)
	}
	t.Logf("%d retries for %d transactions", retried.Load(), workers*each)
}

// Retryable is specific: an ordinary error is not retried.
func TestWriteDoesNotRetryOrdinaryErrors(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	calls := 0
	boom := errors.New("boom")
	err := db.Write(context.Background(), func(*sql.Tx) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
}

// TestOpenKeywordValueString opens the test database through a libpq
// keyword/value string (issue 18 item 8): it is PostgreSQL, not a file.
func TestOpenKeywordValueString(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL()
	if url == "" {
		t.Skip("needs " + storetest.EnvPostgres)
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%d dbname=%s user=%s password='%s' sslmode=disable", cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.Password)
	db, err := store.Open(t.Context(), kv)
	if err != nil {
		t.Fatalf("opening %s: %v", store.Describe(kv), err)
	}
	defer db.Close()
	if db.Dialect != store.Postgres || db.Path != "" || strings.Contains(db.Where, "password") {
		t.Fatalf("dialect %v, path %q, where %q", db.Dialect, db.Path, db.Where)
	}
	if err := db.PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
}
