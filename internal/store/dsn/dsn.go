// Package dsn tells what MAILGATE_DB names, a SQLite file or a PostgreSQL
// connection string, and checks the latter without connecting. It is apart
// from internal/store so that the configuration can check the setting
// without linking the store's engines.
package dsn

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// IsPostgres reports whether dsn selects PostgreSQL rather than a SQLite
// file path: a postgres:// or postgresql:// URL, or a keyword/value string
// such as "host=db.internal dbname=mailgate password=…" (see
// IsKeywordValue). Taking the latter for a file name would create a file
// named after the password and print it in every log line that names the
// store.
func IsPostgres(dsn string) bool {
	return IsPostgresURL(dsn) || IsKeywordValue(dsn)
}

// IsPostgresURL reports whether dsn is a postgres:// or postgresql:// URL.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// IsKeywordValue reports whether dsn is a libpq keyword/value connection
// string: its first word is one of libpq's connection keywords followed by
// "=" ("host=…", "dbname = …"). Only a known keyword counts, so a relative
// SQLite file name that happens to hold "=" is still a file name.
func IsKeywordValue(dsn string) bool {
	s := strings.TrimLeft(dsn, " \t\n\r")
	i := strings.IndexAny(s, "= \t\n\r")
	if i <= 0 {
		return false
	}
	if !pgKeywords[s[:i]] {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(s[i:], " \t\n\r"), "=")
}

// pgKeywords are libpq's connection parameters (PostgreSQL 18), and
// pool_max_conns, which mailgate reads.
var pgKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`host hostaddr port dbname user password passfile require_auth
		channel_binding connect_timeout client_encoding options application_name
		fallback_application_name keepalives keepalives_idle keepalives_interval keepalives_count
		tcp_user_timeout replication gssencmode sslmode sslnegotiation requiressl sslcompression
		sslcert sslkey sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni
		requirepeer ssl_min_protocol_version ssl_max_protocol_version min_protocol_version
		max_protocol_version krbsrvname gsslib gssdelegation service servicefile
		target_session_attrs load_balance_hosts pool_max_conns`) {
		pgKeywords[k] = true
	}
}

// Check parses a PostgreSQL URL or keyword/value string without
// connecting. Its error never holds the password (see Parse).
func Check(dsn string) error {
	_, err := Parse(dsn)
	return err
}

// Parse parses a PostgreSQL dsn with pgx. Its errors never quote dsn: pgx masks
// the password of a URL reliably, since a URL's parts are unambiguous, but
// in a keyword/value string that does not parse it can only guess where the
// password is ("password = a b" or an unquoted space gets past it, and the
// parser's own message quotes the word it stumbled on). So for those the
// error keeps pgx's summary and drops the text.
func Parse(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err == nil {
		return cfg, nil
	}
	if IsPostgresURL(dsn) {
		return nil, fmt.Errorf("is not a valid PostgreSQL URL: %w", err)
	}
	return nil, fmt.Errorf("is not a valid PostgreSQL keyword/value string (%s; the string is not shown, as it may hold a password): "+
		"write key=value pairs separated by spaces, and quote a value holding spaces as password='a b'", parseSummary(err))
}

// parseSummary is pgx's reason for refusing a connection string without the
// string and without the parser's detail: ParseConfigError reads "cannot
// parse `<string, password masked at best>`: <reason> (<detail>)", and only
// <reason> is pgx's own text (the name of the setting at fault, or the value
// of a setting that is not the password).
func parseSummary(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "it does not parse"
	}
	text := pe.Error()
	if inner := pe.Unwrap(); inner != nil {
		text = strings.TrimSuffix(text, " ("+inner.Error()+")")
	}
	i := strings.LastIndex(text, "`: ")
	if i < 0 {
		return "it does not parse"
	}
	return text[i+len("`: "):]
}
