package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gmail"
)

// doctorLine finds the report line of a check: "  <status>  <name>  detail"
// and the fix line under it.
func doctorLine(out, status, name string) (line, fix string, ok bool) {
	lines := strings.Split(out, "\n")
	re := regexp.MustCompile(`^  ` + regexp.QuoteMeta(status) + `\s+` + regexp.QuoteMeta(name) + `\s{2}`)
	for i, l := range lines {
		if re.MatchString(l) {
			if i+1 < len(lines) && strings.Contains(lines[i+1], "fix: ") {
				fix = lines[i+1][strings.Index(lines[i+1], "fix: ")+5:]
			}
			return l, fix, true
		}
	}
	return "", "", false
}

func TestDoctorHealthy(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	r := newSetupRun(w.env, nil, "doctor")
	if code := r.run(t); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	out := r.stdout.String()
	for _, c := range []struct{ name, detail string }{
		{"config", "tools email"}, {"dev mode", "sends nothing"}, {"vault", "will be created"}, {"audit log", "will be created"},
		{"store", "migrations applied, quick_check ok"}, {"credentials", "Desktop client"}, {"token", "(0600) has a refresh token"},
		{"token refresh", "new access token"}, {"scopes", "gmail.readonly, gmail.compose"}, {"gmail api", "signed in as me@example.com"},
	} {
		if l, _, ok := doctorLine(out, "ok", c.name); !ok || !strings.Contains(l, c.detail) {
			t.Errorf("no ok line for %s with %q in:\n%s", c.name, c.detail, out)
		}
	}
	if !strings.HasSuffix(out, "All good.\n") || r.stderr.String() != "" {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, r.stderr)
	}
}

// TestDoctorFindsProblems breaks one thing at a time in a healthy setup and
// checks the report names it, with its fix, and the exit status.
func TestDoctorFindsProblems(t *testing.T) {
	parallelLong(t, 1)
	tests := []struct {
		name   string
		breakf func(t *testing.T, w *world) []string // returns extra env
		root   bool                                  // meaningless as root (permissions are not enforced)
		status string                                // FAIL or warn
		check  string
		detail string
		fix    string
		args   []string
		exit   int
	}{
		{name: "bad config value", breakf: brkEnv("SEND_LIMIT_PER_HOUR=lots"), status: "FAIL", check: "config",
			detail: "SEND_LIMIT_PER_HOUR", fix: "correct SEND_LIMIT_PER_HOUR", exit: 1},
		{name: "credentials missing", breakf: brkRemove("auth/credentials.json"), status: "FAIL", check: "credentials",
			detail: "no OAuth client at", fix: "OAuth client of type Desktop app", exit: 1},
		{name: "credentials not JSON", breakf: brkWrite("auth/credentials.json", "{not json", 0o600), status: "FAIL", check: "credentials",
			detail: "parsing OAuth client", fix: "download the client's JSON again", exit: 1},
		{name: "credentials of a web client", breakf: brkCredentials("web", ""), status: "warn", check: "credentials",
			detail: "Web application client", fix: "type Desktop app", exit: 0},
		{name: "web client, strict", breakf: brkCredentials("web", ""), args: []string{"--strict"}, status: "warn", check: "credentials",
			detail: "Web application client", fix: "type Desktop app", exit: 1},
		{name: "wrong client secret", breakf: brkCredentials("installed", "wrong"), status: "FAIL", check: "token refresh",
			detail: "refused the OAuth client (invalid_client)", fix: "download the client's JSON again", exit: 1},
		{name: "token endpoint unreachable", breakf: brkCredentials("installed", "unreachable"), status: "FAIL", check: "token refresh",
			detail: "could not refresh at http://127.0.0.1:1/token", fix: "check the network", exit: 1},
		{name: "token missing", breakf: brkRemove("auth/token.json"), status: "FAIL", check: "token",
			detail: "no token at", fix: `run "mailgate auth"`, exit: 1},
		{name: "token not a token", breakf: brkWrite("auth/token.json", "[]", 0o600), status: "FAIL", check: "token",
			detail: "parsing OAuth token", fix: `run "mailgate auth"`, exit: 1},
		{name: "token without refresh token", breakf: brkSaveToken(&oauth2.Token{AccessToken: "a", Expiry: time.Now().Add(time.Hour)}),
			status: "FAIL", check: "token", detail: "has no refresh token", fix: `run "mailgate auth" (it asks Google for offline access)`, exit: 1},
		{name: "token readable by others", breakf: brkChmod("auth/token.json", 0o644), status: "FAIL", check: "token",
			detail: "is mode 0644: other users can read your Gmail token", fix: "chmod 600 ", exit: 1},
		{name: "token folder open", breakf: brkChmod("auth", 0o755), status: "warn", check: "token",
			detail: "is open to other users", fix: "chmod 700 ", exit: 0},
		{name: "revoked grant", breakf: brkRevoke, status: "FAIL", check: "token refresh",
			detail: "invalid_grant", fix: `run "mailgate auth"; if this comes back every 7 days`, exit: 1},
		{name: "scope unticked", breakf: brkGrant("gmail.readonly"), status: "FAIL", check: "scopes",
			detail: "granted gmail.readonly; missing gmail.compose", fix: "tick every checkbox", exit: 1},
		{name: "metadata scope", breakf: brkGrant("gmail.readonly", "gmail.compose", "gmail.metadata"), status: "FAIL", check: "scopes",
			detail: "gmail.metadata is granted", fix: "myaccount.google.com/permissions", exit: 1},
		{name: "mirror needs more scopes", breakf: func(t *testing.T, w *world) []string {
			brkGrant("gmail.readonly", "gmail.compose")(t, w)
			return []string{"AGENT_MAIL_MIRROR=gmail", "MAILGATE_TOOLS=agentmail"}
		}, status: "FAIL", check: "scopes", detail: "missing gmail.insert, gmail.labels", fix: "tick every checkbox", exit: 1},
		// A token of an older release (before the organising tools): the
		// tools it leaves out are named, and auth is the fix.
		{name: "tool set grew", breakf: brkGrant("gmail.readonly", "gmail.compose"), status: "FAIL", check: "scopes",
			detail: "granted gmail.readonly, gmail.compose; missing gmail.modify, gmail.settings.basic; tools left out: ",
			fix:    `run "mailgate auth"`, exit: 1},
		{name: "modify and settings are enough", breakf: brkGrant("gmail.modify", "gmail.settings.basic"), status: "ok", check: "scopes", detail: "gmail.modify", exit: 0},
		// Filters and the vacation responder need gmail.settings.basic, for
		// which not even gmail.modify stands in.
		{name: "modify leaves out the settings tools", breakf: brkGrant("gmail.modify"), status: "FAIL", check: "scopes",
			detail: "missing gmail.settings.basic; tools left out: create_filter, delete_filter, set_vacation", fix: `run "mailgate auth"`, exit: 1},
		{name: "gmail unreachable", breakf: brkEnv("GMAIL_API_ENDPOINT=http://127.0.0.1:1/"), status: "FAIL", check: "gmail api",
			detail: "127.0.0.1:1", fix: "GMAIL_API_ENDPOINT", exit: 1},
		{name: "vault not writable", root: true, breakf: brkChmod("vault", 0o500), status: "FAIL", check: "vault",
			detail: "cannot write in", fix: "chmod u+rwx", exit: 1},
		{name: "vault is a file", breakf: brkWrite("vault", "x", 0o600), status: "FAIL", check: "vault",
			detail: "is a file, not a folder", fix: "point VAULT_PATH at a folder", exit: 1},
		{name: "vault folder is a file", breakf: brkWrite("vault/Approved", "x", 0o600), status: "FAIL", check: "vault",
			detail: "Approved is a file", fix: "point VAULT_PATH at a folder", exit: 1},
		{name: "vault writable by others", breakf: brkChmod("vault", 0o777), status: "warn", check: "vault",
			detail: "writable by other users, who could approve emails", fix: "chmod go-w", exit: 0},
		{name: "audit dir is a file", breakf: brkWrite("audit", "x", 0o600), status: "FAIL", check: "audit log",
			detail: "is a file", fix: "AUDIT_LOG_DIR", exit: 1},
		{name: "db under a file", breakf: func(t *testing.T, w *world) []string {
			brkWrite("blocker", "x", 0o600)(t, w)
			return []string{"MAILGATE_DB=" + filepath.Join(w.home, "blocker", "state.db")}
		}, status: "FAIL", check: "store", detail: "blocker is a file", fix: "MAILGATE_DB", exit: 1},
		{name: "db is a folder", breakf: func(t *testing.T, w *world) []string {
			return []string{"MAILGATE_DB=" + w.home}
		}, status: "FAIL", check: "store", detail: "is a folder, not a database file", fix: "point MAILGATE_DB at a file path", exit: 1},
		{name: "db not SQLite", breakf: brkWrite(".mailgate/state.db", strings.Repeat("not a database ", 300), 0o600), status: "FAIL", check: "store",
			detail: "file is not a database", fix: "move it away", exit: 1},
		{name: "gmail not used", breakf: func(t *testing.T, w *world) []string {
			brkRemove("auth/credentials.json")(t, w)
			return []string{"MAILGATE_TOOLS=agentmail"}
		}, status: "ok", check: "gmail", detail: "not used", exit: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() == 0 {
				t.Skip("root writes anywhere; the file-in-the-way cases cover unusable folders")
			}
			w := newWorld(t, true)
			approval.Open(filepath.Join(w.home, "vault"), approval.Options{})
			extra := tt.breakf(t, w)
			r := newSetupRun(append(append([]string{}, w.env...), extra...), nil, append([]string{"doctor"}, tt.args...)...)
			code := r.run(t)
			out := r.stdout.String()
			line, fix, ok := doctorLine(out, tt.status, tt.check)
			if code != tt.exit || !ok || !strings.Contains(line, tt.detail) || !strings.Contains(fix, tt.fix) {
				t.Fatalf("exit %d (want %d); want %s %s with %q and fix %q; got line %q fix %q in:\n%s", code, tt.exit,
					tt.status, tt.check, tt.detail, tt.fix, line, fix, out)
			}
			// The report's summary is said once, on stdout; stderr does
			// not repeat it (it once said "1 failed, 0 warnings" again).
			if strings.Contains(r.stderr.String(), "problem") || strings.Contains(r.stderr.String(), "warnings") {
				t.Errorf("stderr = %q", r.stderr)
			}
		})
	}
}

// TestDoctorBinary runs the built binary, healthy then with the grant
// revoked, as a user would.
func TestDoctorBinary(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	run := func() (string, string, int) {
		cmd := exec.Command(builtBinary(t), "doctor")
		cmd.Dir = "/"
		cmd.Env = w.env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	out, errOut, code := run()
	if _, _, ok := doctorLine(out, "ok", "dev mode"); code != 0 || !ok || !strings.Contains(out, "DEV_MODE=false: a server started with these settings really sends approved emails") {
		t.Fatalf("healthy: exit %d\n%s\n%s", code, out, errOut)
	}
	brkRevoke(t, w)
	out, errOut, code = run()
	if _, fix, ok := doctorLine(out, "FAIL", "token refresh"); code != 1 || !ok || !strings.Contains(fix, `run "mailgate auth"`) ||
		errOut != "" || strings.Count(out, "1 problem") != 1 {
		t.Fatalf("revoked: exit %d\n%s\n%s", code, out, errOut)
	}
}

// ---- ways to break a world ----

func brkEnv(kv ...string) func(*testing.T, *world) []string {
	return func(*testing.T, *world) []string { return kv }
}

func brkRemove(rel string) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		if err := os.RemoveAll(filepath.Join(w.home, rel)); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

func brkWrite(rel, data string, mode os.FileMode) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		p := filepath.Join(w.home, rel)
		os.RemoveAll(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

func brkChmod(rel string, mode os.FileMode) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		p := filepath.Join(w.home, rel)
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o700) }) // let TempDir clean up
		return nil
	}
}

func brkSaveToken(tok *oauth2.Token) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		if err := gmail.SaveToken(filepath.Join(w.home, "auth", "token.json"), tok); err != nil {
			t.Fatal(err)
		}
		return nil
	}
}

// brkGrant replaces the token with one whose grant has exactly these scopes.
func brkGrant(scopes ...string) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		rt := w.gm.IssueRefreshToken(testClientID, scopes...)
		return brkSaveToken(&oauth2.Token{AccessToken: "expired", RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)})(t, w)
	}
}

func brkRevoke(t *testing.T, w *world) []string {
	tok, err := gmail.LoadToken(filepath.Join(w.home, "auth", "token.json"))
	if err != nil {
		t.Fatal(err)
	}
	w.gm.RevokeRefreshToken(tok.RefreshToken)
	return nil
}

// brkCredentials writes the client as kind ("installed" or "web");
// secret "wrong" changes the secret, "unreachable" the token_uri.
func brkCredentials(kind, change string) func(*testing.T, *world) []string {
	return func(t *testing.T, w *world) []string {
		sec := map[string]any{"client_id": testClientID, "client_secret": testClientSecret,
			"auth_uri": w.gm.AuthURL(), "token_uri": w.gm.TokenURL(), "redirect_uris": []string{"http://localhost"}}
		switch change {
		case "wrong":
			sec["client_secret"] = "not-the-secret"
		case "unreachable":
			sec["token_uri"] = "http://127.0.0.1:1/token"
		}
		b, _ := json.Marshal(map[string]any{kind: sec})
		return brkWrite("auth/credentials.json", string(b), 0o600)(t, w)
	}
}
