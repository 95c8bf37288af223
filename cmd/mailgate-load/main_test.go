package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// binPath is the mailgate binary the load runs against: $MAILGATE_BIN (make
// test builds it), or one built here once for the whole run.
var binPath string

func TestMain(m *testing.M) {
	binPath = os.Getenv("MAILGATE_BIN")
	cleanup := func() {}
	if binPath == "" {
		dir, err := os.MkdirTemp("", "mailgate-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cleanup = func() { os.RemoveAll(dir) }
		binPath = filepath.Join(dir, "mailgate")
		out, err := exec.Command("go", "build", "-o", binPath, "../mailgate").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building mailgate: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func noEnv(string) string { return "" }

var callsLine = regexp.MustCompile(`(?m)^calls:\s+(\d+) in `)

// TestLoadSpawned runs the command as the benchmark does, briefly: it
// starts its own server on a free loopback port, and every call of the mix
// must succeed and the server's samples and shutdown must be reported.
func TestLoadSpawned(t *testing.T) {
	// Relative, as in the documented command (-spawn bin/mailgate): the
	// server runs in another directory.
	bin := binPath
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, binPath); err == nil {
			bin = rel
		}
	}
	var out, stderr bytes.Buffer
	// Equal weights: even a slow run (-race, a busy machine) calls every tool.
	code := run(t.Context(), []string{"-spawn", bin, "-clients", "3", "-duration", "2s", "-mix", "send=1,fetch=1,search=1,reserve=1"}, noEnv, &out, &stderr)
	report := out.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, report, stderr.String())
	}
	m := callsLine.FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no calls line in the report:\n%s", report)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Fatalf("no calls made:\n%s", report)
	}
	for _, want := range []string{"\nerrors:   0\n", "send_message", "fetch_inbox", "search_messages", "file_reservation_paths",
		"release_file_reservations", "before (idle, no sessions)", "after (sessions closed)", "server shutdown: clean", "\nPASS"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, tool := range tools {
		if !regexp.MustCompile(`(?m)^` + tool + `\s+[1-9]`).MatchString(report) {
			t.Errorf("no successful %s calls:\n%s", tool, report)
		}
	}
}

// TestLoadRunningServer loads a server started separately (-url, -token,
// -pid); a wrong token fails the run at setup with the server's 401.
func TestLoadRunningServer(t *testing.T) {
	srv, err := startServer(t.Context(), binPath, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.cleanup)

	var out, stderr bytes.Buffer
	args := []string{"-url", srv.url, "-pid", strconv.Itoa(srv.pid), "-clients", "2", "-duration", "1s", "-mix", "send=1,reserve=1"}
	getenv := func(k string) string {
		if k == "AGENT_MAIL_BEARER_TOKEN" {
			return srv.token
		}
		return ""
	}
	if code := run(t.Context(), args, getenv, &out, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), stderr.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("server process (pid %d)", srv.pid)) || !strings.Contains(out.String(), "\nPASS") {
		t.Errorf("report:\n%s", out.String())
	}

	out.Reset()
	stderr.Reset()
	start := time.Now()
	if code := run(t.Context(), append(args, "-token", "wrong-token"), getenv, &out, &stderr); code != 1 {
		t.Fatalf("wrong token: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out.String(), stderr.String())
	}
	if !strings.Contains(strings.ToLower(stderr.String()), "unauthorized") {
		t.Errorf("wrong token: stderr does not say unauthorized:\n%s", stderr.String())
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("wrong token took %s to fail", time.Since(start))
	}
}

func TestParseFlags(t *testing.T) {
	bad := map[string][]string{
		"remote url":      {"-url", "http://192.0.2.1:8765/mcp/"},
		"https url":       {"-url", "https://127.0.0.1/mcp/"},
		"zero clients":    {"-clients", "0"},
		"too many":        {"-clients", "501"},
		"long duration":   {"-duration", "31m"},
		"unknown op":      {"-mix", "send=1,delete=1"},
		"all zero":        {"-mix", "send=0"},
		"negative weight": {"-mix", "send=-1"},
		"pid and spawn":   {"-pid", "1", "-spawn", "x"},
		"stray argument":  {"extra"},
	}
	for name, args := range bad {
		if _, err := parseFlags(args, noEnv, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: %q accepted", name, args)
		}
	}
	cfg, err := parseFlags([]string{"-url", "http://localhost:9/mcp/", "-mix", "fetch=3, search=1"}, func(k string) string {
		if k == "AGENT_MAIL_BEARER_TOKEN" {
			return "from-env"
		}
		return ""
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.token != "from-env" || cfg.clients != 30 || cfg.duration != time.Minute || len(cfg.mix) != 2 || cfg.mix[1] != (mixEntry{opSearch, 1}) {
		t.Errorf("parsed %+v", cfg)
	}
}

func TestPercentile(t *testing.T) {
	var l []time.Duration
	for i := 1; i <= 100; i++ {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(l, p); got != want {
			t.Errorf("p%g = %s, want %s", p, got, want)
		}
	}
	if got := percentile(l[:1], 99); got != time.Millisecond {
		t.Errorf("p99 of one = %s", got)
	}
}
