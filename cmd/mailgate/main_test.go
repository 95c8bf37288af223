package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// binary is the mailgate binary under test: $MAILGATE_BIN (make test builds
// it), or one built once for the whole run, in the background while the
// tests that need none run (builtBinary waits for it).
var binary *testutil.Binary

// realHome is HOME before TestMain replaced it.
var realHome string

func TestMain(m *testing.M) {
	// The tests here mostly wait: on the mailgate processes they start,
	// on a local Gmail server's injected latency, on a server's drain at
	// stop. Two at a time (go test's default, GOMAXPROCS on two cores)
	// leaves the cores idle meanwhile; twice that keeps them busy
	// (cmd/mailgate measured 54.6 s → 39.3 s on two cores, the same CPU).
	// An explicit -parallel wins. The long tests start first (parallelLong).
	queue = testutil.NewQueue(2)
	// Every test makes homes, vaults and stores, and so do the processes
	// it starts: in memory, where the machine has room (testutil.MemoryTemp).
	removeTemp := testutil.MemoryTemp()
	binary = testutil.BuildMailgate(".")
	// With MAILGATE_HOME unset, mailgate uses ~/.mailgate: no test may
	// reach the real one. Subprocesses that inherit this environment, and
	// in-process runs that read it, get a throwaway HOME (the build above
	// keeps the real one, for Go's caches).
	realHome = os.Getenv("HOME") // for the go command's caches (TestREADMEWalkthrough)
	// Gmail's discovery document is found through Go's module cache, under
	// the real HOME: loaded now, kept for every test (gmailschema.Serve).
	if _, err := gmailschema.Load(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		removeTemp()
		os.Exit(1)
	}
	fakeHome, err := os.MkdirTemp("", "mailgate-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		removeTemp()
		os.Exit(1)
	}
	os.Setenv("HOME", fakeHome)
	code := m.Run()
	binary.Cleanup()
	os.RemoveAll(fakeHome)
	removeTemp()
	os.Exit(code)
}

var queue *testutil.Queue

// parallel is t.Parallel for this package's tests (testutil.Queue: the
// number running at once is -parallel's).
func parallel(t *testing.T) { t.Helper(); queue.Parallel(t, 0) }

// parallelLong is parallel for a test that takes seconds: it starts before
// the short ones waiting, the higher rank first, so that it does not run
// on alone at the end of the run.
func parallelLong(t *testing.T, rank int) { t.Helper(); queue.Parallel(t, rank) }

func builtBinary(t testing.TB) string {
	t.Helper()
	path, err := binary.Path()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("mailgate binary: %v", err)
	}
	return path
}

// emailTools is the email set a client lists, sorted by name as go-sdk
// lists them: the tests that list tools through a client compare with it.
// It is the set's reviewed snapshots, one file per tool
// (internal/mcpserver/testdata/toolsnaps/email, held to the inventory by
// TestToolSnapshots), so a new tool is no line here and a binary that
// does not serve one of them fails.
var emailTools = snapshotTools("email")

func snapshotTools(set string) []string {
	entries, err := os.ReadDir(filepath.Join("..", "..", "internal", "mcpserver", "testdata", "toolsnaps", set))
	if err != nil {
		panic(err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && name != "resource_templates" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// world is one user's setup: a home with credentials and a token issued by a
// local Gmail server that requires real OAuth, and the environment a client
// such as Claude Desktop would pass.
type world struct {
	t    testing.TB
	home string
	gm   *localgmail.Server
	env  []string
}

const (
	testClientID     = "test-client.apps.example"
	testClientSecret = "test-secret"
	userEmail        = "me@example.com"
)

func newWorld(t testing.TB, devMode bool, extraEnv ...string) *world {
	t.Helper()
	gm := localgmail.New(localgmail.Options{Email: userEmail, RequireAuth: true})
	// Every answer the binary gets is held to Gmail's discovery document.
	base, _ := gmailschema.Serve(t, gm)
	gm.SetBaseURL(base)
	gm.AddClient(testClientID, testClientSecret)
	rt := gm.IssueRefreshToken(testClientID, "https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/gmail.compose",
		"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/gmail.modify", "https://www.googleapis.com/auth/gmail.settings.basic")
	home := t.TempDir()
	writeJSON(t, filepath.Join(home, "auth", "credentials.json"), map[string]any{"installed": map[string]any{
		"client_id": testClientID, "client_secret": testClientSecret,
		"auth_uri": gm.AuthURL(), "token_uri": gm.TokenURL(), "redirect_uris": []string{"http://localhost"},
	}})
	// An expired access token: the first call refreshes it through /token.
	writeJSON(t, filepath.Join(home, "auth", "token.json"), &oauth2.Token{
		AccessToken: "expired", RefreshToken: rt, TokenType: "Bearer", Expiry: time.Now().Add(-time.Hour),
	})
	for _, eml := range []string{"invoice.eml", "thread1.eml", "thread2.eml"} {
		raw, err := os.ReadFile(filepath.Join("testdata", eml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gm.Insert(raw, "INBOX"); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"MAILGATE_HOME=" + home,
		"GMAIL_API_ENDPOINT=" + gm.URL(),
		fmt.Sprintf("DEV_MODE=%t", devMode),
		"MAILGATE_TOOLS=email",
		"MAILGATE_LOG_LEVEL=warn",
	}
	if storetest.PostgresURL() != "" {
		// The run is on PostgreSQL: the world's processes share a fresh schema.
		env = append(env, "MAILGATE_DB="+storetest.DSN(t))
	}
	return &world{t: t, home: home, gm: gm, env: append(env, extraEnv...)}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// connect starts `mailgate serve` as a subprocess (cwd "/", as Claude Desktop
// may) and initialises a session the way Claude Desktop does.
func (w *world) connect(extraEnv ...string) *mcp.ClientSession {
	w.t.Helper()
	cmd := exec.Command(builtBinary(w.t), "serve")
	cmd.Dir = "/"
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Stderr = &testWriter{t: w.t}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		w.t.Fatalf("connecting to mailgate serve: %v", err)
	}
	w.t.Cleanup(func() { cs.Close() })
	return cs
}

// connectHere is connect without the process: `mailgate serve` in the
// test binary (serveHere), with the world's environment, working
// directory "/" and its stderr in the test's log.
func (w *world) connectHere(extraEnv ...string) *mcp.ClientSession {
	w.t.Helper()
	return serveHere(w.t, append(append([]string{}, w.env...), extraEnv...), &testWriter{t: w.t}, "serve")
}

// serveHere runs `mailgate args...` (a stdio server: serve, serve
// --sandbox) in the test binary through main's dispatch (run), in working
// directory "/" with exactly env, and returns a client session on pipes
// to its stdin and stdout. For the tests whose subject is what the server
// answers and writes, not the process (its stdio, exit status, signals,
// children or peers: those start the binary): a process start costs
// ~20 ms of CPU more than the same server in-process (exec, the
// runtime's and the packages' start, page faults, exit), which the test
// binary has paid once. GOGC is set in the run's environment so that
// serve leaves the test binary's collector alone (setGCPercent). As with
// a process, closing the session waits for the server to stop; an error
// it stops with fails the test.
func serveHere(t testing.TB, env []string, stderr io.Writer, args ...string) *mcp.ClientSession {
	t.Helper()
	return serveHereIn(t, "/", env, stderr, args...)
}

// serveHereIn is serveHere in working directory dir, as a client started
// in dir starts its server (the mailbox and channels sets' project).
func serveHereIn(t testing.TB, dir string, env []string, stderr io.Writer, args ...string) *mcp.ClientSession {
	t.Helper()
	r := newSetupRun(append(append([]string{}, env...), "GOGC=100"), nil, args...)
	r.env.dir = dir
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	r.env.stdin, r.env.stdout, r.env.stderr = stdinR, stdoutW, stderr
	stopped := make(chan struct{})
	var runErr error
	go func() {
		defer close(stopped)
		runErr = run(context.Background(), r.env)
		stdoutW.Close()
		stdinR.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil)
	stdin := &stopOnClose{PipeWriter: stdinW, stopped: stopped}
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: stdoutR, Writer: stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		stdin.Close()
		t.Fatalf("connecting to mailgate %s (in-process): %v; it returned %v", strings.Join(args, " "), err, runErr)
	}
	t.Cleanup(func() {
		cs.Close()
		<-stopped
		// The client stops reading before it closes the server's stdin: a
		// last write of the server's may find the pipe closed, as a process's
		// would find its stdout gone.
		if runErr != nil && !errors.Is(runErr, io.ErrClosedPipe) {
			t.Errorf("mailgate %s (in-process): %v", strings.Join(args, " "), runErr)
		}
	})
	return cs
}

// stopOnClose is an in-process server's stdin (connectHere): closing it
// is the server's EOF, and waits until the server has stopped, as closing
// a CommandTransport's session waits for the process to exit.
type stopOnClose struct {
	*io.PipeWriter
	stopped <-chan struct{}
}

func (s *stopOnClose) Close() error {
	err := s.PipeWriter.Close()
	<-s.stopped
	return err
}

// toolNames lists the tools a client sees, in go-sdk's order (by name).
func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func call(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func (w *world) files(folder string) []string {
	entries, _ := os.ReadDir(filepath.Join(w.home, "vault", folder))
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") { // in-flight or abandoned atomic writes
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// approveAll moves every pending request to Approved/, as the human would.
func (w *world) approveAll() int {
	w.t.Helper()
	names := w.files("Pending_Approval")
	for _, n := range names {
		if err := os.Rename(filepath.Join(w.home, "vault", "Pending_Approval", n), filepath.Join(w.home, "vault", "Approved", n)); err != nil {
			w.t.Fatal(err)
		}
	}
	return len(names)
}

func (w *world) read(folder, name string) string {
	b, err := os.ReadFile(filepath.Join(w.home, "vault", folder, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

type testWriter struct{ t testing.TB }

func (tw *testWriter) Write(p []byte) (int, error) {
	tw.t.Logf("mailgate stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
