package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/store/dsn"
)

// TestStateDBReadableByOtherUsers is issue 18 item 8: the store, its -wal
// and -shm files are the owner's alone, and so is the folder mailgate
// creates for them; a store left readable by an older mailgate is tightened.
func TestStateDBReadableByOtherUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "home", ".mailgate")
	path := filepath.Join(dir, "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	wantMode(t, dir, 0o700)
	wantMode(t, filepath.Dir(dir), 0o700)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}
	db.Close()

	// A store an older mailgate left readable by others.
	old := filepath.Join(t.TempDir(), "old.db")
	if db, err = Open(ctx, old); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Chmod(old, 0o644)
	db, err = Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wantMode(t, old, 0o600)
}

func wantMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %#o, want %#o", path, got, want)
	}
}

// TestKeywordPostgresStringTakenForFileName is issue 18 item 8: a libpq
// keyword/value string selects PostgreSQL; it was taken for a SQLite file
// name, created a file named after the password, and printed it.
func TestKeywordPostgresStringTakenForFileName(t *testing.T) {
	tests := []struct {
		dsn  string
		want bool
	}{
		{"host=db.internal dbname=mailgate user=mg password=s3cr3t", true},
		{"  dbname = mailgate", true},
		{"password='a b' host=x", true},
		{"sslmode=require", true},
		{"postgres://u:p@h/db", true},
		{"postgresql://h/db", true},
		{"/srv/mailgate/state.db", false},
		{"/tmp/host=x/state.db", false},
		{"state=1.db", false}, // not a libpq keyword: a relative file name
		{"hostx=1", false},
		{"host", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := IsPostgres(tc.dsn); got != tc.want {
			t.Errorf("IsPostgres(%q) = %v, want %v", tc.dsn, got, tc.want)
		}
	}

	const kv = "host=127.0.0.1 port=1 dbname=mailgate user=mg password=s3cr3t-pw connect_timeout=2"
	if d := Describe(kv); d != "postgres://mg@127.0.0.1:1/mailgate" {
		t.Errorf("Describe(keyword string) = %q", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := Open(ctx, kv)
	if err == nil {
		t.Fatal("nothing listens on port 1, yet the store opened")
	}
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("error %q: want PostgreSQL named, no password", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("a file was created: %s", ents[0].Name())
	}
}

// TestKeywordPostgresParseErrorsHideThePassword: a keyword/value string
// that does not parse is refused without quoting it, even where pgx cannot
// tell the password from the rest.
func TestKeywordPostgresParseErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"host=x password = s3cr3t leaked dbname=y",
		"host=x password=s3cr3t leaked",
		"host=x password='s3cr3t leaked",
		"host=x port=notaport password=s3cr3t",
		"host=x password=s3cr3t sslmode=leaked",
	} {
		err := dsn.Check(s)
		if err == nil {
			t.Errorf("%q: accepted", s)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "leaked") || !strings.Contains(err.Error(), "keyword/value") {
			t.Errorf("%q: %v", s, err)
		}
		if d := Describe(s); strings.Contains(d, "s3cr3t") {
			t.Errorf("Describe(%q) = %q", s, d)
		}
	}
}
