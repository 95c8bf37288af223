package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/store"
)

// The mirror's tables moved from agent-mail's migration 0003_mirror.sql
// into the mirror's own 0001_outbox.sql. These tests hold the three
// promises of that move on the engine under test: a store the earlier code
// filled keeps working with every row; the mirror's migration alone builds
// a working schema; and it builds exactly what 0003 built.

// migrated lists the migrations of component recorded in db.
func migrated(t *testing.T, db *store.DB, component string) []string {
	t.Helper()
	rows, err := db.Query(db.Rebind(`SELECT version FROM schema_migrations WHERE component = ? ORDER BY version`), component)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, db *store.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(db.Rebind(query), args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// triggers counts the outbox triggers on am_messages: exactly one, or
// every message would be queued by each (and a missing one queues nothing).
func triggers(t *testing.T, db *store.DB) int {
	if db.Dialect == store.Postgres {
		return count(t, db, `SELECT count(*) FROM pg_trigger WHERE tgname = 'am_mirror_outbox_ai' AND tgrelid = 'am_messages'::regclass`)
	}
	return count(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'am_messages' AND name = 'am_mirror_outbox_ai'`)
}

// TestMigrateStoreOfEarlierCode: a store as the code before the mirror
// had migrations left it (agent-mail's 0003 applied, no "mirror"
// migration recorded, a registered sink with a backlog and a recorded
// message) opens under the mirror's migration with every row intact, and
// the mirror carries on from it: the backlog is mirrored, the recorded
// message is not mirrored again, new messages are queued once.
func TestMigrateStoreOfEarlierCode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	first := e.send(t, "BlueLake", "before", "", "GreenCastle")
	second := e.send(t, "GreenCastle", "pending", "", "BlueLake")
	third := e.reply(t, "BlueLake", second)

	// What the earlier code wrote, with its statements: the sink's
	// registration and backfill (OpenOutbox), then the first message
	// mirrored and recorded (GmailSink's record, Outbox.Done).
	if got := migrated(t, e.db, "agentmail"); !slices.Contains(got, "0003_mirror.sql") {
		t.Fatalf("agent-mail migrations %v lack 0003_mirror.sql", got)
	}
	if got := migrated(t, e.db, "mirror"); len(got) != 0 {
		t.Fatalf("mirror migrations %v recorded before the mirror ran", got)
	}
	for _, q := range []string{
		`INSERT INTO am_mirror_sinks (name, created_us) VALUES ('gmail', 1)`,
		`INSERT INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
			SELECT 'gmail', id, project_id, COALESCE(thread_id, CAST(id AS TEXT)) FROM am_messages`,
		`INSERT INTO am_mirror_gmail_messages (message_id, gmail_id, gmail_thread_id, rfc_message_id, mirrored_us)
			VALUES (?, 'gid-before', 'tid-before', '<before>', 2)`,
		`INSERT INTO am_mirror_gmail_threads (project_id, thread_key, gmail_thread_id)
			SELECT project_id, CAST(id AS TEXT), 'tid-before' FROM am_messages WHERE id = ?`,
		`DELETE FROM am_mirror_outbox WHERE message_id = ?`,
	} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{first}
		}
		if _, err := e.db.ExecContext(ctx, e.db.Rebind(q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// The code of today, in another process.
	db, svc := openStore(t, e.path)
	if err := mirror.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	if got := migrated(t, db, "mirror"); !slices.Equal(got, []string{"0001_outbox.sql"}) {
		t.Errorf("mirror migrations = %v, want [0001_outbox.sql]", got)
	}
	for q, want := range map[string]int{
		`SELECT count(*) FROM am_mirror_sinks WHERE name = 'gmail' AND created_us = 1`:                                1,
		`SELECT count(*) FROM am_mirror_outbox WHERE sink = 'gmail'`:                                                  2,
		`SELECT count(*) FROM am_mirror_gmail_messages WHERE gmail_id = 'gid-before' AND rfc_message_id = '<before>'`: 1,
		`SELECT count(*) FROM am_mirror_gmail_threads WHERE gmail_thread_id = 'tid-before'`:                           1,
		`SELECT count(*) FROM am_mirror_outbox WHERE sink = 'gmail' AND message_id IN (` + ids(second, third) + `)`:   2,
	} {
		if got := count(t, db, q); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
	if n := triggers(t, db); n != 1 {
		t.Fatalf("%d outbox triggers on am_messages, want 1", n)
	}

	e.startGmail(t, db, svc, 0)
	fourth := e.send(t, "RedStone", "after", "", "BlueLake")
	waitDrained(t, db, mirror.GmailSinkName, 10*time.Second)
	if n := e.gm.Calls("messages.insert"); n != 3 {
		t.Errorf("%d inserts, want 3 (the backlog and the new message; the recorded one is done)", n)
	}
	if n := count(t, db, `SELECT count(*) FROM am_mirror_gmail_messages WHERE message_id IN (`+ids(second, third, fourth)+`)`); n != 3 {
		t.Errorf("%d of the 3 new messages recorded", n)
	}
	if n := count(t, db, `SELECT count(*) FROM am_mirror_gmail_messages WHERE message_id = ? AND gmail_id = 'gid-before'`, first); n != 1 {
		t.Error("the message mirrored by the earlier code lost its record")
	}
}

// TestMigrateFreshStore: the mirror's migration alone builds the schema
// the mirror works on. The objects agent-mail's 0003 made are dropped
// first (so that 0003 can become a no-op once no older mailgate can open
// the store); the mirror then migrates, queues and mirrors as ever.
func TestMigrateFreshStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	drop := `DROP TRIGGER am_mirror_outbox_ai;`
	if e.db.Dialect == store.Postgres {
		drop = `DROP TRIGGER am_mirror_outbox_ai ON am_messages; DROP FUNCTION am_mirror_outbox_enqueue();`
	}
	drop += ` DROP TABLE am_mirror_sinks; DROP TABLE am_mirror_outbox; DROP TABLE am_mirror_gmail_messages; DROP TABLE am_mirror_gmail_threads;`
	if _, err := e.db.ExecContext(ctx, drop); err != nil {
		t.Fatal(err)
	}
	before := e.send(t, "BlueLake", "before the mirror", "", "GreenCastle")
	if _, err := mirror.OpenOutbox(ctx, e.db, mirror.GmailSinkName, 0); err != nil {
		t.Fatal(err)
	}
	if got := migrated(t, e.db, "mirror"); !slices.Equal(got, []string{"0001_outbox.sql"}) {
		t.Errorf("mirror migrations = %v, want [0001_outbox.sql]", got)
	}
	if n := triggers(t, e.db); n != 1 {
		t.Fatalf("%d outbox triggers on am_messages, want 1", n)
	}
	after := e.send(t, "GreenCastle", "after", "", "BlueLake")
	reply := e.reply(t, "BlueLake", after)
	e.startGmail(t, e.db, e.svc, 0)
	waitDrained(t, e.db, mirror.GmailSinkName, 10*time.Second)
	assertExactlyOnce(t, e, []int64{before, after, reply})
}

// TestMigrationRepeatsAgentMail0003: every line of agent-mail's
// 0003_mirror.sql (comments aside) is in the mirror's 0001_outbox.sql, in
// order, up to the guards (IF NOT EXISTS, OR REPLACE): the mirror builds on
// a fresh store exactly what 0003 built on the stores before, so the two
// kinds of store cannot drift apart.
func TestMigrationRepeatsAgentMail0003(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			old := sqlLines(t, filepath.Join("..", "agentmail", engine, "migrations", "0003_mirror.sql"))
			mine := sqlLines(t, filepath.Join("migrations", engine, "0001_outbox.sql"))
			i := 0
			for _, l := range mine {
				if i < len(old) && l == old[i] {
					i++
				}
			}
			if i < len(old) {
				t.Errorf("0001_outbox.sql lacks (in order) line %q of agent-mail's 0003_mirror.sql", old[i])
			}
		})
	}
}

// sqlLines reads a migration's statement lines, trimmed, without comments
// and without the guards that make a statement safe to repeat.
func sqlLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "--") {
			continue
		}
		l = strings.Replace(l, " IF NOT EXISTS", "", 1)
		l = strings.Replace(l, " OR REPLACE", "", 1)
		out = append(out, l)
	}
	return out
}

func ids(ns ...int64) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ", ")
}
