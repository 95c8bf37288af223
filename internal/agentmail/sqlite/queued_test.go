package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// FuzzQueuedMayMatch: mayMatch, which lets a search skip indexing the
// queue, never says no where FTS5 itself (the store's tokenizer, on one
// message) matches: else a search would miss a stored message.
func FuzzQueuedMayMatch(f *testing.F) {
	for _, c := range [][3]string{
		{"Build failed", "POL-358 migration broke", "pol-358"},
		{"Café", "naïve résumé", "cafe resume"},
		{"x", "cafe\u0301 ab\u0301cd", `"cafe" OR cd`},
		{"Ærøskøbing", "Straße ﬁle ＡＢＣ", "aeroskobing OR strasse OR file OR abc"},
		{"retry budget", "the retries", "retr* NOT budget"},
		{"a$b_c", "d.e/f", `"a b" c subject:d body:e*`},
		{"İstanbul", "KELVIN \u212a", "istanbul k"},
		{"日本語", "テスト", "日本 OR テ*"},
	} {
		f.Add(c[0], c[1], c[2])
	}
	db := storetest.OpenDSN(f, filepath.Join(f.TempDir(), "fts.db"))
	if _, err := db.Exec(`CREATE VIRTUAL TABLE f USING fts5(subject, body_md, tokenize = 'unicode61 remove_diacritics 2')`); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, subject, body, query string) {
		q, _ := agentmail.ParseQuery(query)
		if q == nil {
			return
		}
		if _, err := db.Exec(`DELETE FROM f; INSERT INTO f (subject, body_md) VALUES (?, ?)`, subject, body); err != nil {
			t.Skip(err) // text SQLite cannot hold
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM f WHERE f MATCH ?`, FTS5(q)).Scan(&n); err != nil {
			t.Fatalf("FTS5 refused %q: %v", FTS5(q), err)
		}
		var pieces [][][]byte
		for _, t := range q.Terms() {
			pieces = append(pieces, termPieces(t.Text))
		}
		term := 0
		if n > 0 && !mayMatch(q, foldQueued(subject+" "+body), pieces, &term) {
			t.Fatalf("FTS5 matches %q against (%q, %q), but mayMatch says it cannot", FTS5(q), subject, body)
		}
	})
}
