package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestExpandPrefixes: a prefix longer than the prefix indexes becomes the
// indexed words it names, whoever indexed them: this version's indexer, or
// an older one that only emptied the queue (its messages' words wait in
// am_fts_batch until the next indexing run moves them).
func TestExpandPrefixes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenDSN(t, filepath.Join(t.TempDir(), "state.db"))
	st, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.idx.delay = 1 << 62 // the test indexes
	svc, err := agentmail.New(st, agentmail.Options{})
	testutil.Closing(t, svc, err)
	if _, err := svc.EnsureProject(ctx, "/p"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Alice", "Bob"} {
		if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: "/p", Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, body := range []string{"Migration of the schema", "we migrate MIGRATIONS", "migraine"} {
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: "s", BodyMD: body}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	// As an older indexer does: index and empty the queue, nothing more.
	if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/p", Sender: "Alice", To: []string{"Bob"}, Subject: "s", BodyMD: "migratory birds"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO am_messages_fts (rowid, subject, body_md) SELECT m.id, m.subject, m.body_md FROM am_fts_pending p JOIN am_messages m ON m.id = p.message_id;
		DELETE FROM am_fts_pending`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, want string }{
		{"migrat*", `((("migrate" OR "migration") OR "migrations") OR "migratory")`},
		{"subject:Migrati* NOT x", `((subject : "migration" OR subject : "migrations") NOT "x")`},
		{"migraine*", `"migraine"`},
		{"mig*", `"mig"*`},                 // a prefix index answers it
		{"zzzzz*", `"zzzzz"*`},             // names no word: nothing for FTS5 to gather
		{"migrä*", `"migrä"*`},             // folding only FTS5 knows
		{`"of the sch"*`, `"of the sch"*`}, // a phrase
	} {
		q, _ := agentmail.ParseQuery(c.q)
		var got string
		err := st.read(ctx, func(t *tx) error {
			e, err := t.expandPrefixes(ctx, q)
			got = FTS5(e)
			return err
		})
		if err != nil || got != c.want {
			t.Errorf("expandPrefixes(%s) = %s, %v; want %s", c.q, got, err, c.want)
		}
	}
}
