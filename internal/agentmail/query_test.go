package agentmail_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/postgres"
	amsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// TestAgentMailParseQuery: the tree of each input, as its String (the
// query as understood) and as FTS5 renders it.
func TestAgentMailParseQuery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want, fts string
		noted         bool
	}{
		{"", "", "", false},
		{"Hello", `"Hello"`, `"Hello"`, false},
		{"hello world", `("hello" AND "world")`, `("hello" AND "world")`, false},
		{`"build failed"`, `"build failed"`, `"build failed"`, false},
		{`"build failed`, `"build failed"`, `"build failed"`, true},
		{"mig*", `"mig"*`, `"mig"*`, false},
		{"*mig", `"mig"`, `"mig"`, true},
		{"*", "", "", true},
		{"a OR b", `("a" OR "b")`, `("a" OR "b")`, false},
		{"a AND b OR c", `(("a" AND "b") OR "c")`, `(("a" AND "b") OR "c")`, false},
		{"a NOT b", `("a" NOT "b")`, `("a" NOT "b")`, false},
		{"NOT b", "", "", true},
		{"AND a", `"a"`, `"a"`, true},
		{"a OR", `"a"`, `"a"`, true},
		{"a and b", `(("a" AND "and") AND "b")`, `(("a" AND "and") AND "b")`, false},
		{"POL-358", `"POL-358"`, `"POL-358"`, false},
		{"(a OR b) c", `(("a" OR "b") AND "c")`, `(("a" OR "b") AND "c")`, false},
		{"(a OR b", `("a" OR "b")`, `("a" OR "b")`, true},
		{"a) b", `("a" AND "b")`, `("a" AND "b")`, true},
		{"subject:deploy", `subject:"deploy"`, `subject : "deploy"`, false},
		{"body:x*", `body:"x"*`, `body_md : "x"*`, false},
		{`Subject: "a b" OR body_md:c`, `(subject:"a b" OR body:"c")`, `(subject : "a b" OR body_md : "c")`, false},
		{`say "hi""`, `("say" AND "hi")`, `("say" AND "hi")`, true},
		{"NEAR(a b)", `("NEAR" AND ("a" AND "b"))`, `("NEAR" AND ("a" AND "b"))`, false},
		{"---", "", "", true},
	}
	for _, c := range cases {
		tree, notes := agentmail.ParseQuery(c.in)
		if got := tree.String(); got != c.want || (len(notes) > 0) != c.noted {
			t.Errorf("ParseQuery(%q) = %q, notes %q; want %q (notes: %v)", c.in, got, notes, c.want, c.noted)
		}
		if got := amsqlite.FTS5(tree); got != c.fts {
			t.Errorf("FTS5(ParseQuery(%q)) = %q, want %q", c.in, got, c.fts)
		}
	}
}

// ftsDB is a store with the real agent-mail schema, for running MATCH
// expressions against FTS5 itself.
func ftsDB(tb testing.TB) *store.DB {
	tb.Helper()
	ctx := context.Background()
	db := storetest.OpenDSN(tb, filepath.Join(tb.TempDir(), "fts.db"))
	st, err := amsqlite.Open(ctx, db)
	if err != nil {
		tb.Fatal(err)
	}
	// Closed before the DB (cleanups run last-in first-out): a statement the
	// store still prepares in the background holds a connection, which
	// otherwise outlives the DB and writes its -wal and -shm files into the
	// temporary folder while it is removed ("directory not empty").
	tb.Cleanup(func() { st.Close() })
	if _, err := db.Exec(`INSERT INTO am_projects (id, slug, human_key, created_us) VALUES (1, 'p', '/p', 0);
		INSERT INTO am_agents (id, project_id, name, inception_us, last_active_us) VALUES (1, 1, 'A', 0, 0);
		INSERT INTO am_messages (project_id, sender_id, subject, body_md, created_us) VALUES (1, 1, 'Build failed', 'POL-358 migration broke é ü', 0);`); err != nil {
		tb.Fatal(err)
	}
	if err := st.IndexPending(ctx); err != nil {
		tb.Fatal(err)
	}
	return db
}

// FuzzSearchQuery: whatever an agent types, ParseQuery does not panic; its
// String reads back as the same tree; the FTS5 rendering is an expression
// FTS5 accepts; and the two engines agree on what is searchable: FTS5's
// rendering is empty exactly when the tsquery's is.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"", "Hello", `"a b" OR c*`, "NOT", "((a", `"`, "a:b", "subject:", "NEAR(a b, 2)", "*", "a AND NOT b",
		"col:x OR", "^a", "a + b", "\x00", "\xff\xfe", "{a b}: c", "é*", "a\"b", "-x", "AND OR NOT", ") (", "subject:\"x y\"*",
		"a\\b 'c'", "x:*A <-> !y", "body: \"\" z"} {
		f.Add(s)
	}
	db := ftsDB(f)
	stmt, err := db.Prepare(`SELECT count(*) FROM am_messages_fts WHERE am_messages_fts MATCH ?`)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { stmt.Close() })
	f.Fuzz(func(t *testing.T, q string) {
		tree, _ := agentmail.ParseQuery(q)
		if again, _ := agentmail.ParseQuery(tree.String()); again.String() != tree.String() {
			t.Fatalf("ParseQuery(%q) = %q, which reads back as %q", q, tree.String(), again.String())
		}
		match, tsq := amsqlite.FTS5(tree), postgres.Tsquery(tree)
		if (match == "") != (tsq == "") {
			t.Fatalf("ParseQuery(%q): FTS5 %q but tsquery %q: the engines disagree on whether it can be searched", q, match, tsq)
		}
		if match == "" {
			return
		}
		var n int
		if err := stmt.QueryRow(match).Scan(&n); err != nil {
			t.Fatalf("ParseQuery(%q) rendered for FTS5 as %q, which FTS5 refuses: %v", q, match, err)
		}
	})
}

func TestAgentMailLikeTerms(t *testing.T) {
	t.Parallel()
	got := agentmail.LikeTerms("the build of POL-358 and a-b c d e f g")
	if strings.Join(got, ",") != "build,POL-358,a-b,c,d" {
		t.Errorf("LikeTerms = %v", got)
	}
}
