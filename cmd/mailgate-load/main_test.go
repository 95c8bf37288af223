package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// binary is the mailgate binary the load runs against: $MAILGATE_BIN (make
// test builds it), or one built once for the whole run, in the background
// while the tests that need none run (binPath waits for it).
var binary *testutil.Binary

func TestMain(m *testing.M) {
	binary = testutil.BuildMailgate("../mailgate")
	code := m.Run()
	binary.Cleanup()
	os.Exit(code)
}

func binPath(t *testing.T) string {
	t.Helper()
	path, err := binary.Path()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func noEnv(string) string { return "" }

var callsLine = regexp.MustCompile(`(?m)^calls:\s+(\d+) in `)

// TestLoadSpawned runs the command as the benchmark does, briefly: it
// starts its own server on a free loopback port, and every call of the mix
// must succeed and the server's samples and shutdown must be reported.
func TestLoadSpawned(t *testing.T) {
	t.Parallel()
	// Relative, as in the documented command (-spawn bin/mailgate): the
	// server runs in another directory.
	bin := binPath(t)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, bin); err == nil {
			bin = rel
		}
	}
	var out, stderr bytes.Buffer
	// Equal weights: even a slow run (-race, a busy machine) calls every tool.
	// Paced: the test checks the calls and the report, not throughput, and
	// ~60 calls show every tool where the closed loop made ~2,500 in the
	// 2 s (~1.5 CPU s of the server's and the clients'). A machine too slow
	// for the pace calls back to back, as the closed loop does, so a slow
	// run makes as many calls as before. TestLoadRunningServer runs the
	// closed loop.
	// ~60 calls either way: 500 ms at 120 calls/s in a quick run, 2 s at
	// 30 in make test (testutil.Size): the quick run's paced wait held one
	// of go test's two workers idle while the linking waited.
	ms := testutil.Size(500, 2000)
	rate := 60 * 1000 / ms
	code := run(t.Context(), []string{"-spawn", bin, "-clients", "3", "-duration", strconv.Itoa(ms) + "ms", "-rate", strconv.Itoa(rate), "-mix", "send=1,fetch=1,search=1,reserve=1"}, noEnv, &out, &stderr)
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
	for _, want := range []string{"\nerrors:   0\n", fmt.Sprintf("paced at %d calls/s", rate), "send_message", "fetch_inbox", "search_messages", "file_reservation_paths",
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
// -pid), briefly and back to back (the closed loop, as the benchmark runs);
// a wrong token fails the run at setup with the server's 401.
func TestLoadRunningServer(t *testing.T) {
	t.Parallel()
	srv, err := startServer(t.Context(), binPath(t), "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.cleanup)

	var out, stderr bytes.Buffer
	// 200 ms: the closed loop keeps both cores busy for as long as it runs
	// (~0.1 CPU s of the server's and the clients' per 100 ms), and the
	// test checks that it runs, not how fast.
	args := []string{"-url", srv.url, "-pid", strconv.Itoa(srv.pid), "-clients", "2", "-duration", "200ms", "-mix", "send=1,reserve=1"}
	getenv := func(k string) string {
		if k == "AGENT_MAIL_BEARER_TOKEN" {
			return srv.token
		}
		return ""
	}
	if code := run(t.Context(), args, getenv, &out, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), stderr.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("server process (pid %d)", srv.pid)) || !strings.Contains(out.String(), "closed loop") || !strings.Contains(out.String(), "\nPASS") {
		t.Errorf("report:\n%s", out.String())
	}
	if m := callsLine.FindStringSubmatch(out.String()); m == nil || m[1] == "0" {
		t.Errorf("the closed loop made no calls:\n%s", out.String())
	}

	// A wrong token fails the run at connecting, before any load: no
	// report is printed.
	out.Reset()
	stderr.Reset()
	if code := run(t.Context(), append(args, "-token", "wrong-token"), getenv, &out, &stderr); code != 1 {
		t.Fatalf("wrong token: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out.String(), stderr.String())
	}
	if !strings.Contains(strings.ToLower(stderr.String()), "unauthorized") {
		t.Errorf("wrong token: stderr does not say unauthorized:\n%s", stderr.String())
	}
	if out.Len() != 0 {
		t.Errorf("wrong token: the load ran and reported:\n%s", out.String())
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
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

// TestParseFlagsServersAndDB covers -servers and -db: what each needs, their
// bounds, and which URLs -db takes.
func TestParseFlagsServersAndDB(t *testing.T) {
	t.Parallel()
	const pg = "postgres://load:s3cret@127.0.0.1:55432/mailgate?sslmode=disable"
	tests := []struct {
		name    string
		args    []string
		wantErr string // "" = accepted
	}{
		{"servers without spawn", []string{"-servers", "2"}, "-servers needs -spawn"},
		{"servers 1 without spawn", []string{"-servers", "1"}, "-servers needs -spawn"},
		{"db without spawn", []string{"-db", pg}, "-db needs -spawn"},
		{"servers 2 without db", []string{"-spawn", "x", "-servers", "2"}, "would not share a store"},
		{"servers 0", []string{"-spawn", "x", "-servers", "0", "-db", pg}, "-servers 0: want 1 to 16"},
		{"servers 17", []string{"-spawn", "x", "-servers", "17", "-db", pg}, "-servers 17: want 1 to 16"},
		{"servers negative", []string{"-spawn", "x", "-servers", "-1"}, "want 1 to 16"},
		{"db sqlite path", []string{"-spawn", "x", "-db", "/tmp/state.db"}, "only postgres:// or postgresql://"},
		{"db mysql url", []string{"-spawn", "x", "-db", "mysql://root:pw@127.0.0.1/db"}, "only postgres:// or postgresql://"},
		{"db empty", []string{"-spawn", "x", "-db", ""}, "only postgres:// or postgresql://"},
		{"db bad port", []string{"-spawn", "x", "-db", "postgres://load:s3cret@127.0.0.1:notaport/mailgate"}, "not a valid PostgreSQL URL"},
		{"fewer clients than servers", []string{"-spawn", "x", "-servers", "3", "-db", pg, "-clients", "2"}, "at least one client per server"},
		{"one server sqlite", []string{"-spawn", "x"}, ""},
		{"one server postgres", []string{"-spawn", "x", "-db", pg}, ""},
		{"sixteen servers postgresql", []string{"-spawn", "x", "-servers", "16", "-db", "postgresql://u@localhost/mg"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseFlags(tt.args, noEnv, &bytes.Buffer{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("%q: %v", tt.args, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%q accepted: %+v", tt.args, cfg)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %q, want it to say %q", tt.args, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":pw@") {
				t.Errorf("%q: error shows the password: %v", tt.args, err)
			}
		})
	}
}

// TestProjectPerRun: on a shared database each run gets a project of its
// own; without -db the project is the fixed one, as before.
func TestProjectPerRun(t *testing.T) {
	t.Parallel()
	args := []string{"-spawn", "x", "-db", "postgres://load:s3cret@db.local:6543/mg", "-servers", "3"}
	a, err := parseFlags(args, noEnv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseFlags(args, noEnv, &bytes.Buffer{})
	if !strings.HasPrefix(a.project, projectKey+"-") || a.project == b.project {
		t.Errorf("projects %q and %q: want %s-<random>, different per run", a.project, b.project, projectKey)
	}
	if a.dbName != "load@db.local:6543/mg" || a.servers != 3 {
		t.Errorf("dbName %q, servers %d", a.dbName, a.servers)
	}
	c, err := parseFlags([]string{"-spawn", "x"}, noEnv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.project != projectKey || c.servers != 1 || c.db != "" {
		t.Errorf("without -db: project %q, servers %d, db %q", c.project, c.servers, c.db)
	}
}

// TestReportSeveralServers: one line per server, the store without its
// password, and every server's shutdown.
// TestReportAfterDescriptors: descriptors over the idle count after the
// sessions closed are said to be connections still open only when the
// sockets are; otherwise the report says they are not connections.
func TestReportAfterDescriptors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		after procStat
		want  string
	}{
		{procStat{FDs: 22, Sockets: 1}, "after: sockets back to idle (1): the 9 descriptors over the idle count are not connections"},
		{procStat{FDs: 22, Sockets: 4}, "after: 4 sockets against 1 idle: connections still open"},
		{procStat{FDs: 13, Sockets: 1}, ""},
	} {
		sr := &serverRun{pid: 1, before: procStat{FDs: 13, Sockets: 1}, endOfLoad: procStat{FDs: 30, Sockets: 10}, after: c.after}
		var out bytes.Buffer
		(&result{}).printServer(&out, sr)
		report := out.String()
		if c.want == "" {
			if strings.Contains(report, "  after: ") {
				t.Errorf("descriptors back to idle, yet the report says:\n%s", report)
			}
		} else if !strings.Contains(report, c.want) {
			t.Errorf("after %+v: report lacks %q:\n%s", c.after, c.want, report)
		}
	}
}

func TestReportSeveralServers(t *testing.T) {
	t.Parallel()
	cfg, err := parseFlags([]string{"-spawn", "bin/mailgate", "-servers", "2", "-db", "postgres://load:s3cret@127.0.0.1:55432/mailgate", "-clients", "4"}, noEnv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	st := newStats()
	st.record(toolSend, time.Millisecond)
	st.record(toolFetch, 2*time.Millisecond)
	srv := func(pid, calls int) *serverRun {
		return &serverRun{endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp/", pid), pid: pid, procName: "mailgate", calls: calls,
			before: procStat{RSS: 20 << 20, FDs: 10}, endOfLoad: procStat{RSS: 30 << 20, FDs: 20, CPU: time.Second},
			after: procStat{RSS: 25 << 20, FDs: 12}, series: []sample{{procStat: procStat{RSS: 22 << 20, FDs: 18}}},
			shutdown: "clean (SIGTERM, in-flight calls finished, exit 0)", clean: true}
	}
	res := &result{cfg: cfg, spawned: true, stats: st, elapsed: time.Second, servers: []*serverRun{srv(1001, 1), srv(1002, 1)}}
	var out bytes.Buffer
	res.print(&out)
	report := out.String()
	for _, want := range []string{
		"store:    postgres load@127.0.0.1:55432/mailgate, 2 servers sharing it; project " + cfg.project,
		"\n  #1      1001        1       0   20.0 → 30.0 → 25.0", "\n  #2      1002        1       0   20.0 → 30.0 → 25.0",
		"10 → 20 → 12", "\n  #1  clean (SIGTERM", "\n  #2  clean (SIGTERM", "\nPASS",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "s3cret") {
		t.Errorf("report shows the password:\n%s", report)
	}
	res.servers[1].clean = false
	if res.ok() {
		t.Error("ok with a server that did not stop cleanly")
	}
}

// TestLoadPostgresTwoServers spawns two servers on the PostgreSQL database
// of $MAILGATE_TEST_POSTGRES, as -servers 2 -db does: the clients are spread
// over both, every call must succeed, and both must have taken calls.
func TestLoadPostgresTwoServers(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv("MAILGATE_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("MAILGATE_TEST_POSTGRES is not set (e.g. postgres://postgres@127.0.0.1:55432/mailgate?sslmode=disable, from .ci/pgtest.sh start)")
	}
	// Paced, as TestLoadSpawned: a machine too slow for the pace calls
	// back to back.
	args := []string{"-spawn", binPath(t), "-servers", "2", "-db", dsn, "-clients", "4", "-duration", "3s", "-rate", "40", "-mix", "send=1,fetch=1,search=1,reserve=1"}
	cfg, err := parseFlags(args, noEnv, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	res, err := execute(t.Context(), cfg, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var out bytes.Buffer
	res.print(&out)
	report := out.String()
	t.Logf("report:\n%s", report)
	if n := res.stats.errorCount(); n != 0 {
		t.Errorf("%d errors", n)
	}
	if !res.ok() {
		t.Errorf("run not ok")
	}
	if len(res.servers) != 2 {
		t.Fatalf("%d servers in the result, want 2", len(res.servers))
	}
	total := 0
	for i, sr := range res.servers {
		if sr.calls == 0 {
			t.Errorf("server #%d (%s) took no calls", i+1, sr.endpoint)
		}
		if !sr.clean {
			t.Errorf("server #%d shutdown: %s", i+1, sr.shutdown)
		}
		if sr.before.RSS == 0 || sr.after.RSS == 0 {
			t.Errorf("server #%d not sampled: before %+v after %+v", i+1, sr.before, sr.after)
		}
		total += sr.calls
	}
	if total != res.total() {
		t.Errorf("per-server calls add up to %d, total %d", total, res.total())
	}
	if res.servers[0].endpoint == res.servers[1].endpoint || res.servers[0].pid == res.servers[1].pid {
		t.Errorf("the two servers are one: %+v %+v", res.servers[0], res.servers[1])
	}
	for _, want := range []string{"store:    postgres " + cfg.dbName + ", 2 servers sharing it", "\n  #1 ", "\n  #2 ", "\nPASS"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
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
