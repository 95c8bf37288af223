package main

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// TestCLI: every command's -h shows its own flags with their defaults (and
// only serve the twenty configuration flags), asked-for help exits 0, a
// stray argument or an unknown flag is a usage error (exit status 2, one
// line naming it and the way to the help), and --version answers.
func TestCLI(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	for _, tt := range []struct {
		args     []string
		code     int
		want     []string // in the output
		dontWant []string
	}{
		{[]string{"serve", "-h"}, 0, []string{"Usage: mailgate serve", "--sandbox", "--dev-mode VALUE", "[default true; DEV_MODE]", "[default email,agentmail; MAILGATE_TOOLS]"}, nil},
		{[]string{"auth", "--help"}, 0, []string{"Usage: mailgate auth", "--timeout DURATION", "[default 5m0s]", "--no-browser"}, []string{"--dev-mode", "--approval-mode"}},
		{[]string{"doctor", "-h"}, 0, []string{"Usage: mailgate doctor", "--strict"}, []string{"--dev-mode", "--sandbox"}},
		{[]string{"approvals", "-h"}, 0, []string{"mailgate approvals show ID"}, []string{"--dev-mode"}},
		{[]string{"config", "-h"}, 0, []string{"mailgate config set NAME VALUE"}, []string{"--dev-mode"}},
		{[]string{"home", "-h"}, 0, []string{"--migrate-from DIR"}, []string{"--dev-mode"}},
		{[]string{"claude-config", "-h"}, 0, []string{"Usage: mailgate claude-config", "--install", "--client", "--tools VALUE"}, []string{"--approval-mode VALUE"}},
		{[]string{"demo", "--help"}, 0, []string{"Usage: mailgate demo", "--keep"}, nil},
		{[]string{"agents-snippet", "-h"}, 0, []string{"Usage: mailgate agents-snippet"}, []string{"--dev-mode"}},
		{[]string{"watch", "-h"}, 0, []string{"Usage: mailgate watch", "--once", "--interval DURATION", "[default 1s]"}, []string{"--dev-mode"}},
		{[]string{"mailbox", "-h"}, 0, []string{"mailgate mailbox send"}, []string{"--dev-mode"}},
		{[]string{"mailbox", "--bogus"}, 2, []string{"mailgate mailbox: flag provided"}, nil},
		{[]string{"--help"}, 0, []string{"mailgate serve", "mailgate claude-config", "Exit status"}, nil},
		{[]string{"--version"}, 0, []string{"mailgate "}, nil},
		{[]string{"version"}, 0, []string{"mailgate "}, nil},

		{[]string{"serve", "sandbox"}, 2, []string{`mailgate serve: unexpected argument "sandbox" (see mailgate serve -h)`}, nil},
		{[]string{"serve", "--sandbox", "--http=127.0.0.1:0", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"serve", "--http", "127.0.0.1:0", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		// Flags after --http's address are flags: the bad one is named.
		{[]string{"serve", "--http", "127.0.0.1:0", "--tools", "fax"}, 1, []string{"MAILGATE_TOOLS", `"fax"`}, nil},
		{[]string{"serve", "--bogus"}, 2, []string{"mailgate serve: flag provided but not defined: -bogus (see mailgate serve -h)"}, nil},
		{[]string{"doctor", "--bogus"}, 2, []string{"mailgate doctor: flag provided but not defined"}, []string{"FAIL"}},
		{[]string{"doctor", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"auth", "--port"}, 2, []string{"mailgate auth: flag needs an argument"}, nil},
		{[]string{"approvals", "--bogus"}, 2, []string{"mailgate approvals: flag provided"}, nil},
		{[]string{"config", "--bogus"}, 2, []string{"mailgate config: flag provided"}, nil},
		{[]string{"home", "extra"}, 2, nil, nil},
		{[]string{"claude-config", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"demo", "--bogus"}, 2, []string{"mailgate demo: flag provided"}, nil},
		{[]string{"demo", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"agents-snippet", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"watch", "extra"}, 2, []string{`unexpected argument "extra"`}, nil},
		{[]string{"version", "extra"}, 2, nil, nil},
		{[]string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}, nil},
		{nil, 2, []string{"Usage:"}, nil},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, code := cliRun(t, home, env, tt.args...)
			if code != tt.code {
				t.Errorf("exit status %d, want %d; output:\n%s", code, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// cliRun runs a command line for TestCLI: through the binary for the lines
// that show main's own wiring (the version, an unknown command, no
// command); the rest in-process through main's dispatch and exit status,
// the same code without a process start (~20 ms of CPU each). serve's
// lines too: each is its help or a refusal of its command line, given
// before serve sets anything process-wide (its logger, the collector's
// target, stdout for the protocol).
func cliRun(t *testing.T, home string, env []string, args ...string) (string, int) {
	t.Helper()
	if len(args) == 0 || slices.Contains([]string{"--version", "frobnicate"}, args[0]) {
		return runIn(t, home, env, args...)
	}
	r := newSetupRun(env, nil, args...)
	code := r.run(t)
	return r.stdout.String() + r.stderr.String(), code
}

// TestServeQuietStart: at the default log level, a healthy start and a
// session write one line to stderr, which says what is served, where the
// home is and what an approval does (DEV_MODE), and nothing per session.
func TestServeQuietStart(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	cmd := exec.Command(builtBinary(t), "serve", "--sandbox")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), `"search_email"`) {
		t.Fatalf("no tools/list answer on stdout:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), stderr.String())
	}
	for _, want := range []string{`msg="mailgate serving over stdio"`, "home=" + home, "dev_mode=\"DEV_MODE=true does not apply to the sandbox", "tools=email,agentmail", "gmail=\"sandbox mailbox"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("start line lacks %q: %s", want, lines[0])
		}
	}
}

// TestConfigGet: every variable of the contract can be read back as in
// effect, the way a script takes the HTTP token.
func TestConfigGet(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "MAILGATE_HOME=" + home}
	if out, code := runIn(t, home, env, "config", "set", "AGENT_MAIL_BEARER_TOKEN", "0123456789abcdef0123456789abcdef"); code != 0 {
		t.Fatal(out)
	}
	// Every setting, in-process through main's dispatch and exit status
	// (one binary run per setting cost ~20 ms of CPU each, 34 of them);
	// the binary itself answers the two gets below.
	for _, v := range config.Vars {
		r := newSetupRun(env, nil, "config", "get", v.Name)
		code := r.run(t)
		if out := r.stdout.String() + r.stderr.String(); code != 0 || strings.TrimSpace(out) == "" && v.Default != "" { // a setting without a default (GMAIL_API_ENDPOINT, the JWT keys) is empty when unset
			t.Errorf("config get %s: exit %d %q", v.Name, code, out)
		}
	}
	if out, _ := runIn(t, home, env, "config", "get", "AGENT_MAIL_BEARER_TOKEN"); out != "0123456789abcdef0123456789abcdef\n" {
		t.Errorf("config get AGENT_MAIL_BEARER_TOKEN = %q", out)
	}
	if _, code := runIn(t, home, env, "config", "get", "NOPE"); code != 2 {
		t.Errorf("config get NOPE: exit %d", code)
	}
}

// TestConfigHelpListsEverySetting: "mailgate config -h" lists every setting
// of config.Vars with its default, so a name "config set" refuses can be
// looked up there.
func TestConfigHelpListsEverySetting(t *testing.T) {
	parallel(t)
	var b strings.Builder
	printHelp(flag.NewFlagSet("config", flag.ContinueOnError), &b)
	for _, v := range config.Vars {
		if !regexp.MustCompile(`(?m)^\s+` + v.Name + `\s+default ` + regexp.QuoteMeta(v.DefaultText()) + `$`).MatchString(b.String()) {
			t.Errorf("config -h does not list %s with its default %q:\n%s", v.Name, v.DefaultText(), b.String())
		}
	}
}
