package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/cli.golden from what the commands print")

// cliCase is one command line of the CLI golden file.
type cliCase struct {
	args []string
	// problem is what the output must name (the wrong argument, the
	// unknown flag); "" for help and for a command that just runs.
	problem string
}

// cliCases: every command with no argument (where that is not "run for
// good": serve, demo, watch and auth would serve, walk through, follow or
// sign in, and doctor's report depends on the machine), a wrong argument,
// -h, and an unknown flag; then the command lines issue 33 found wanting.
func cliCases() []cliCase {
	var cs []cliCase
	for _, c := range []string{"approvals", "mailbox", "config", "home", "agents-snippet", "guard", "version"} {
		cs = append(cs, cliCase{args: []string{c}})
	}
	for _, c := range []string{"serve", "demo", "auth", "doctor", "approvals", "mailbox", "claude-config", "config", "home", "agents-snippet", "watch", "guard", "version"} {
		cs = append(cs,
			cliCase{args: []string{c, "frob"}, problem: "frob"},
			cliCase{args: []string{c, "-h"}},
			cliCase{args: []string{c, "--bogus"}, problem: "bogus"},
		)
	}
	return append(cs,
		cliCase{args: []string{"frob"}, problem: "frob"},
		cliCase{args: []string{"serv"}, problem: "serv"},
		cliCase{args: []string{"approvals", "show"}, problem: "show needs an ID"},
		cliCase{args: []string{"approvals", "approve"}, problem: "approve needs an ID"},
		cliCase{args: []string{"approvals", "show", "a", "b"}, problem: `"b"`},
		cliCase{args: []string{"approvals", "approve", "dana"}, problem: "dana"},
		cliCase{args: []string{"approvals", "approve", "--yes", "dana"}, problem: "dana"},
		cliCase{args: []string{"config", "set"}, problem: "set needs a setting's NAME"},
		cliCase{args: []string{"config", "set", "DEV_MODE"}, problem: "set DEV_MODE needs a VALUE"},
		cliCase{args: []string{"config", "set", "DEVMODE", "false"}, problem: "DEVMODE"},
		cliCase{args: []string{"config", "set", "dev-mode", "false"}, problem: "dev-mode"},
		cliCase{args: []string{"config", "get", "SEND_LIMIT"}, problem: "SEND_LIMIT"},
		cliCase{args: []string{"config", "unset"}, problem: "unset needs"},
		cliCase{args: []string{"mailbox", "recieve"}, problem: "recieve"},
		cliCase{args: []string{"mailbox", "import"}, problem: "import takes one DIR"},
		cliCase{args: []string{"mailbox", "status", "bogus"}, problem: "bogus"},
		cliCase{args: []string{"claude-config", "--client", "cursor"}, problem: "cursor"},
		// -h after a subcommand is the help too, not an argument.
		cliCase{args: []string{"approvals", "show", "-h"}},
		cliCase{args: []string{"config", "set", "-h"}},
		cliCase{args: []string{"mailbox", "status", "-h"}},
	)
}

// nextStep: what a refusal offers to do next (the help, what is accepted,
// the nearest name, where to list or look up).
var nextStep = regexp.MustCompile(`-h\b|--help|\buse |did you mean|Valid:|list them with|takes |needs |one of|mailgate config -h`)

// TestCLIGolden runs every command with no argument, a wrong argument, -h
// and an unknown flag, in a fresh home, and compares what each prints (and
// its exit status) with testdata/cli.golden (go test -run TestCLIGolden
// -update rewrites it; review the diff). Each refusal must exit 2 for a
// command line that is wrong (1 for a name that matches nothing), name the
// problem and offer a next step; -h must exit 0 with the command's usage.
func TestCLIGolden(t *testing.T) {
	parallel(t)
	root := t.TempDir()
	home, userHome := filepath.Join(root, "home"), filepath.Join(root, "user")
	vars := []string{"MAILGATE_HOME=" + home, "HOME=" + userHome, "PATH=" + os.Getenv("PATH")}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	repo, _ := filepath.Abs(filepath.Join("..", "..")) // agents-snippet names the project: the clone's top level
	var golden strings.Builder
	for _, c := range cliCases() {
		r := newSetupRun(vars, nil, c.args...)
		code := r.run(t)
		out := r.stdout.String() + r.stderr.String()
		shown := strings.NewReplacer(home, "$MAILGATE_HOME", userHome, "$HOME", self, "$MAILGATE_BIN", repo, "$REPO", url.QueryEscape(repo), "$REPO").Replace(out)
		fmt.Fprintf(&golden, "$ mailgate %s\n%s[exit %d]\n\n", strings.Join(c.args, " "), shown, code)

		name := strings.Join(c.args, " ")
		help := c.args[len(c.args)-1] == "-h"
		switch {
		case help:
			if code != 0 || !strings.HasPrefix(r.stdout.String(), "Usage") {
				t.Errorf("%s: exit %d, want 0 and the usage on stdout:\n%s", name, code, out)
			}
		case c.problem != "":
			if code != 2 && code != 1 {
				t.Errorf("%s: exit %d, want 2 (or 1 for a name that matches nothing):\n%s", name, code, out)
			}
			if !strings.Contains(out, c.problem) {
				t.Errorf("%s: the output does not name the problem (%q):\n%s", name, c.problem, out)
			}
			if !nextStep.MatchString(out) {
				t.Errorf("%s: the output offers no next step:\n%s", name, out)
			}
		}
		if strings.Contains(out, ".env.example") || strings.Contains(out, "see docs/") {
			t.Errorf("%s: cites a file a binary-only install lacks:\n%s", name, out)
		}
	}
	path := filepath.Join("testdata", "cli.golden")
	if *update {
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/mailgate -run TestCLIGolden -update writes it)", err)
	}
	if string(want) != golden.String() {
		t.Errorf("the CLI's output differs from %s (go test ./cmd/mailgate -run TestCLIGolden -update, then review the diff):\n%s", path, firstDiff(string(want), golden.String()))
	}
}

// firstDiff shows the first line where two texts differ, with context.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  golden: %q\n  now:    %q", i+1, x, y)
		}
	}
	return ""
}
