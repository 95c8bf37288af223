package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/joho/godotenv"
)

// WriteSetting keeps comments and other lines, replaces every line of the
// variable with one, removes it for "", and writes 0600; what it writes
// reads back unchanged.
func TestWriteSetting(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "home")
	path := filepath.Join(dir, ".env")
	if err := WriteSetting(path, "DEV_MODE", "false"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings file: %v %v", fi, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home: %v %v", fi, err)
	}
	os.WriteFile(path, []byte("# mine\nDEV_MODE=true\nexport SEND_LIMIT_PER_HOUR=3\nDEV_MODE = maybe\n"), 0o600)
	if err := WriteSetting(path, "DEV_MODE", "false"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\nDEV_MODE=false\nexport SEND_LIMIT_PER_HOUR=3\n" {
		t.Fatalf("got %q", b)
	}
	if err := WriteSetting(path, "SEND_LIMIT_PER_HOUR", ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "# mine\nDEV_MODE=false\n" {
		t.Fatalf("got %q", b)
	}
	for _, v := range []string{"/a b/c", "it's", `a\b "c"`, "#x", "$HOME", "~/v", "postgres://u:p@h:5432/d?sslmode=require"} {
		if err := WriteSetting(path, "VAULT_PATH", v); err != nil {
			t.Fatal(err)
		}
		m, err := godotenv.Read(path)
		if err != nil || m["VAULT_PATH"] != v {
			b, _ := os.ReadFile(path)
			t.Errorf("%q read back as %q (%v); file:\n%s", v, m["VAULT_PATH"], err, b)
		}
	}
	if err := WriteSetting(path, "VAULT_PATH", `it's \ "x"`); err == nil {
		t.Error("an unwritable value accepted")
	}
	if err := WriteSetting(path, "MAILGATE_HOME", ""); err != nil {
		t.Errorf("removing MAILGATE_HOME: %v", err)
	}
	for _, name := range []string{"MAILGATE_HOME", "PATH", "dev_mode"} {
		if err := WriteSetting(path, name, "x"); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if err := WriteSetting(path, "DEV_MODE", "true\nMAILGATE_TOOLS=mailbox"); err == nil {
		t.Error("a line break accepted")
	}
}

// A working directory used as a home before the default moved is found;
// a clone of the repository (README files only) is not.
func TestLegacyHome(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cwd := t.TempDir()
	for _, d := range []string{"vault", "auth", "audit"} {
		os.MkdirAll(filepath.Join(cwd, d), 0o755)
		os.WriteFile(filepath.Join(cwd, d, "README.md"), nil, 0o644)
	}
	c := &Config{Home: filepath.Join(home, ".mailgate"), HomeIsDefault: true}
	if got := c.LegacyHome(cwd); got != nil {
		t.Fatalf("clone taken for a home: %v", got)
	}
	os.MkdirAll(filepath.Join(cwd, "vault", "Done"), 0o700)
	os.WriteFile(filepath.Join(cwd, "auth", "token.json"), nil, 0o600)
	want := []string{filepath.Join("vault", "Done"), filepath.Join("auth", "token.json")}
	if got := c.LegacyHome(cwd); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := c.LegacyHome(filepath.Join(c.Home, "x")); got != nil {
		t.Fatalf("inside the home: %v", got)
	}
	// From the user's home folder, the home's own files are not an older
	// home's.
	os.MkdirAll(filepath.Join(c.Home, ".mailgate"), 0o700)
	os.WriteFile(filepath.Join(c.Home, ".mailgate", "state.db"), nil, 0o600)
	os.WriteFile(filepath.Join(c.Home, "state.db"), nil, 0o600)
	if got := c.LegacyHome(home); got != nil {
		t.Fatalf("the user's home folder taken for an older home: %v", got)
	}
	c.HomeIsDefault = false
	if got := c.LegacyHome(cwd); got != nil {
		t.Fatalf("MAILGATE_HOME given: %v", got)
	}
	if !strings.HasSuffix(c.Home, DefaultHomeName) {
		t.Fatal(c.Home)
	}
}

// FuzzWriteSetting: whatever value a person gives `mailgate config set`, the
// settings file either refuses it or holds it so that it reads back
// unchanged, with the other settings (and comments) intact: a value can
// never smuggle in a second setting.
func FuzzWriteSetting(f *testing.F) {
	for _, v := range []string{"false", "/a b/c", "it's", `a\b "c"`, "#x", "$HOME", "x=y", "'", `"`, " lead", "trail ", "a\tb", "é", "`cmd`", "${X}"} {
		f.Add("# keep\nDEV_MODE=true\nSEND_LIMIT_PER_HOUR=4\n", v)
	}
	f.Fuzz(func(t *testing.T, before, value string) {
		dir := t.TempDir()
		path := filepath.Join(dir, ".env")
		if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
		orig, err := godotenv.Read(path)
		if err != nil {
			return // not a file godotenv reads: nothing to keep
		}
		if err := WriteSetting(path, "VAULT_PATH", value); err != nil {
			return
		}
		got, err := godotenv.Read(path)
		if err != nil {
			t.Fatalf("the written file does not parse: %v", err)
		}
		if value != "" && got["VAULT_PATH"] != value {
			t.Fatalf("VAULT_PATH = %q, want %q", got["VAULT_PATH"], value)
		}
		for k, v := range orig {
			if k != "VAULT_PATH" && got[k] != v {
				t.Fatalf("%s changed from %q to %q", k, v, got[k])
			}
		}
		for k := range got {
			if _, ok := orig[k]; !ok && k != "VAULT_PATH" {
				t.Fatalf("a new setting %s appeared", k)
			}
		}
	})
}
