package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// The checks run against a real setup in cmd/mailgate (doctor_test.go);
// these cover the pieces whose edge cases are easier to reach here.

func TestProbeDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	os.Mkdir(filepath.Join(base, "dir"), 0o700)
	tests := []struct {
		name, dir   string
		exists      bool
		problem, at string // substring of the message, path at fault
	}{
		{"writable", filepath.Join(base, "dir"), true, "", ""},
		{"creatable", filepath.Join(base, "new", "deeper"), false, "", ""},
		{"a file", file, true, "is a file, not a folder", file},
		{"under a file", filepath.Join(file, "sub", "x"), false, "cannot be created: " + file + " is a file", file},
	}
	for _, tt := range tests {
		exists, p := probeDir(tt.dir, "VAR")
		switch {
		case exists != tt.exists:
			t.Errorf("%s: exists = %v", tt.name, exists)
		case tt.problem == "" && p != nil:
			t.Errorf("%s: unexpected problem %+v", tt.name, p)
		case tt.problem != "" && (p == nil || !strings.Contains(p.msg, tt.problem) || p.path != tt.at || !strings.Contains(p.fix, "VAR")):
			t.Errorf("%s: problem %+v, want %q at %s naming VAR", tt.name, p, tt.problem, tt.at)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(base, "dir")); len(entries) != 0 {
		t.Errorf("probe files left behind: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(base, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Error("probing a missing folder created it")
	}
}

func TestReadCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, body, kind, err string
	}{
		{"desktop", `{"installed":{"client_id":"1-a.apps","token_uri":"https://oauth2.googleapis.com/token"}}`, "installed", ""},
		{"web", `{"web":{"client_id":"1-a.apps"}}`, "web", ""},
		{"service account", `{"type":"service_account","client_id":"1"}`, "", `no "installed" or "web" client`},
		{"empty client id", `{"installed":{"client_id":""}}`, "", `no "installed" or "web" client`},
		{"not JSON", `{nope`, "", "parsing OAuth client"},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
		os.WriteFile(p, []byte(tt.body), 0o600)
		c, err := ReadCredentials(p)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || c.Kind != tt.kind {
			t.Errorf("%s: %+v, %v", tt.name, c, err)
		}
	}
	if _, err := ReadCredentials(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist in the chain", err)
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	checks := []Check{
		{Name: "config", Detail: "fine"},
		{Name: "token", Status: Fail, Detail: "no token", Fix: `run "mailgate auth"`},
		{Name: "vault", Status: Warn, Detail: "loose\nperms", Fix: "chmod go-w /v"},
	}
	Write(&b, "/home", checks)
	want := `mailgate doctor: /home
  ok    config  fine
  FAIL  token   no token
                fix: run "mailgate auth"
  warn  vault   loose perms
                fix: chmod go-w /v
1 problem, 1 warning: fix the FAIL lines, then run mailgate doctor again.
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	if f, w := Counts(checks); f != 1 || w != 1 {
		t.Fatalf("Counts = %d, %d", f, w)
	}
}

func TestConfigError(t *testing.T) {
	t.Parallel()
	c := ConfigError(&config.Error{Var: "APPROVAL_TTL", Msg: "bad"})
	if c.Status != Fail || !strings.Contains(c.Fix, "APPROVAL_TTL") {
		t.Fatalf("%+v", c)
	}
}

// TestWindowsSkipsModeBits: permission bits mean nothing on Windows, so a
// 0644 token is not reported there.
func TestWindowsSkipsModeBits(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "auth"), 0o755)
	os.WriteFile(filepath.Join(home, "auth", "token.json"), []byte(`{"access_token":"a","refresh_token":"r"}`), 0o644)
	cfg := &config.Config{Home: home, TokenFile: filepath.Join(home, "auth", "token.json")}
	for goos, want := range map[string]Status{"windows": OK, "linux": Fail} {
		r := &run{cfg: cfg, o: Options{GOOS: goos}}
		r.token()
		if got := r.checks[0].Status; got != want {
			t.Errorf("%s: token check %v (%s), want %v", goos, got, r.checks[0].Detail, want)
		}
	}
}
