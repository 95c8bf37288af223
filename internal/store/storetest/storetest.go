// Package storetest gives tests a fresh state store on the engine the run
// selects: SQLite by default, PostgreSQL when MAILGATE_TEST_POSTGRES holds the
// URL of a database the tests may create schemas in (`make test` starts a
// throwaway cluster and runs the store suites once more with it set).
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the admin connection

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
)

// EnvPostgres names the variable holding the test database's URL.
const EnvPostgres = "MAILGATE_TEST_POSTGRES"

// PostgresURL is the test database's URL, "" when the run is on SQLite.
func PostgresURL() string { return os.Getenv(EnvPostgres) }

// Engine names the engine of this run, for test logs and benchmark names.
func Engine() string {
	if PostgresURL() != "" {
		return "postgres"
	}
	return "sqlite"
}

// DSN returns what MAILGATE_DB would hold for a fresh, empty store: a SQLite
// file in a temporary folder, or the URL of the test database with a new
// schema first on its search_path (dropped when the test ends). Several
// processes given the same DSN share the store.
func DSN(tb testing.TB) string {
	tb.Helper()
	base := PostgresURL()
	if base == "" {
		return filepath.Join(tb.TempDir(), "state.db")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("storetest: %s: %v", EnvPostgres, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		tb.Fatalf("storetest: creating schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			tb.Logf("storetest: dropping schema %s: %v", schema, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("storetest: %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens a fresh store (see DSN), closed when the test ends.
func Open(tb testing.TB) *store.DB {
	tb.Helper()
	return OpenDSN(tb, DSN(tb))
}

// OpenDSN opens the store at dsn, closed when the test ends.
func OpenDSN(tb testing.TB, dsn string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), dsn)
	return testutil.Closing(tb, db, err)
}
