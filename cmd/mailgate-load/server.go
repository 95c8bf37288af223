package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// spawned is a `mailgate serve --http` started by -spawn.
type spawned struct {
	cmd     *exec.Cmd
	home    string
	logPath string
	db      string // MAILGATE_DB: a postgres:// URL, or "" for the home's SQLite file
	url     string
	token   string
	pid     int
	scanned chan struct{} // closed once the server's stderr is fully copied
	stopped bool
	exit    string
}

// startupTimeout bounds how long the server may take to print its URL.
const startupTimeout = 30 * time.Second

// stopTimeout is longer than the server's own 20 s shutdown grace, so a slow
// but orderly shutdown is seen as such rather than killed.
const stopTimeout = 30 * time.Second

var urlField = regexp.MustCompile(`msg="mailgate serving over HTTP" .*\burl=(http://\S+)`)

// startServers starts n servers (see startServer) at once, all with the same
// token and store, and waits until every one serves. If any fails, the
// others are stopped again and the error names the one that failed.
func startServers(ctx context.Context, bin, token, db string, n int) ([]*spawned, error) {
	if token == "" {
		token = newToken() // one for all: a client may talk to any of them
	}
	srvs := make([]*spawned, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { srvs[i], errs[i] = startServer(ctx, bin, token, db) })
	}
	wg.Wait()
	var failed []error
	for i, err := range errs {
		if err != nil {
			if n > 1 {
				err = fmt.Errorf("server %d of %d: %w", i+1, n, err)
			}
			failed = append(failed, err)
		}
	}
	if len(failed) == 0 {
		return srvs, nil
	}
	for _, s := range srvs {
		if s != nil {
			s.cleanup()
		}
	}
	if len(failed) == 1 {
		return nil, failed[0]
	}
	// The servers usually fail alike (a database that is not there): one
	// message says it.
	more := fmt.Sprintf("and %d more servers", len(failed)-1)
	if len(failed) == 2 {
		more = "and 1 more server"
	}
	return nil, fmt.Errorf("%w\n(%s failed to start)", failed[0], more)
}

func newToken() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startServer starts bin serve --http on a free loopback port, in a fresh
// home with only the agent-mail tools, and waits for the URL it logs. The
// environment is built from scratch: an inherited MAILGATE_DB or .env must
// not point the load at someone's real store; db, when not "", is the one
// MAILGATE_DB given (-db). MAILGATE_LOG_LEVEL passes through, as it changes
// the cost of the per-request log.
func startServer(ctx context.Context, bin, token, db string) (*spawned, error) {
	// The server runs in its home directory, where a relative bin/mailgate
	// would name nothing: resolve it here, as a shell would.
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("-spawn %s: %w", bin, err)
	}
	if bin, err = filepath.Abs(path); err != nil {
		return nil, fmt.Errorf("-spawn %s: %w", bin, err)
	}
	if token == "" {
		token = newToken()
	}
	home, err := os.MkdirTemp("", "mailgate-load-")
	if err != nil {
		return nil, fmt.Errorf("creating the server home: %w", err)
	}
	s := &spawned{home: home, logPath: filepath.Join(home, "server.log"), db: db, token: token, scanned: make(chan struct{})}
	if err := s.start(ctx, bin); err != nil {
		s.cleanup()
		return nil, err
	}
	return s, nil
}

func (s *spawned) start(ctx context.Context, bin string) error {
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return fmt.Errorf("creating the server log: %w", err)
	}
	// Not exec.CommandContext: an interrupted run still stops the server
	// with SIGTERM through stop, rather than having it killed.
	s.cmd = exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	s.cmd.Dir = s.home
	realHome, _ := os.UserHomeDir()
	s.cmd.Env = serverEnv(s.home, s.token, s.db, os.Environ(), realHome)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	s.pid = s.cmd.Process.Pid
	found := make(chan string, 1)
	go func() {
		defer close(s.scanned)
		defer logFile.Close()
		copyLog(stderr, logFile, found)
	}()
	select {
	case s.url = <-found:
		return nil
	case <-s.scanned:
		s.stop()
		return fmt.Errorf("%s serve --http exited before serving:%s", bin, indent(s.tail(20)))
	case <-time.After(startupTimeout):
		s.stop()
		return fmt.Errorf("%s serve --http printed no URL within %s:%s", bin, startupTimeout, indent(s.tail(20)))
	case <-ctx.Done():
		s.stop()
		return fmt.Errorf("starting %s: %w", bin, ctx.Err())
	}
}

// copyLog copies the server's stderr to its log file, sending the first
// serving URL it sees. The pipe must be drained for as long as the server
// runs: a full pipe would block every request it logs.
func copyLog(r io.Reader, w io.Writer, found chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(w, line)
		if m := urlField.FindStringSubmatch(line); m != nil && !sent {
			found <- m[1]
			sent = true
		}
	}
	io.Copy(w, r) // a line past the scanner's bound: keep draining
}

// stop sends SIGTERM and waits for a graceful exit, killing the server only
// past stopTimeout. It says how the server ended; calling it again repeats
// the first answer.
func (s *spawned) stop() string {
	if s.stopped || s.cmd == nil || s.cmd.Process == nil {
		return s.exit
	}
	s.stopped = true
	s.cmd.Process.Signal(syscall.SIGTERM)
	waited := make(chan error, 1)
	go func() {
		<-s.scanned
		waited <- s.cmd.Wait()
	}()
	select {
	case err := <-waited:
		switch {
		case err != nil:
			s.exit = fmt.Sprintf("SIGTERM, then %v", err)
		case !strings.Contains(s.tail(5), `msg="HTTP server stopped"`):
			s.exit = "SIGTERM, exit 0 but no \"HTTP server stopped\" line (shutdown cut short)"
		default:
			s.exit = "clean (SIGTERM, in-flight calls finished, exit 0)"
		}
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-waited
		s.exit = fmt.Sprintf("killed: still running %s after SIGTERM", stopTimeout)
	}
	return s.exit
}

// cleanup stops the server if need be and removes its home.
func (s *spawned) cleanup() {
	s.stop()
	os.RemoveAll(s.home)
}

// clean reports whether stop saw an orderly shutdown.
func (s *spawned) clean() bool { return strings.HasPrefix(s.exit, "clean") }

// problems is the server log's warnings and errors (at most 20 lines): the
// request log at info level is one line per call and says nothing here.
func (s *spawned) problems() string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… and %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}

// tail is the last n lines of the server log.
func (s *spawned) tail(n int) string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "\n    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// serverEnv is a spawned server's environment: a home of its own (so no
// .env of the user's changes what is measured), plus what reaching a
// PostgreSQL server may need from the user's: the PG* variables libpq and
// pgx read (PGPASSWORD, PGSSLMODE, …) and, as HOME is replaced, the user's
// ~/.pgpass named by PGPASSFILE when it exists and none is set.
func serverEnv(home, token, db string, environ []string, realHome string) []string {
	env := []string{
		"PATH=" + lookupEnv(environ, "PATH"),
		"HOME=" + home,
		"MAILGATE_HOME=" + home,
		"MAILGATE_TOOLS=agentmail",
		"AGENT_MAIL_BEARER_TOKEN=" + token,
	}
	if lvl := lookupEnv(environ, "MAILGATE_LOG_LEVEL"); lvl != "" {
		env = append(env, "MAILGATE_LOG_LEVEL="+lvl)
	}
	if db == "" {
		return env
	}
	env = append(env, "MAILGATE_DB="+db)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "PG") && strings.Contains(kv, "=") {
			env = append(env, kv)
		}
	}
	if lookupEnv(environ, "PGPASSFILE") == "" && realHome != "" {
		if pgpass := filepath.Join(realHome, ".pgpass"); fileExists(pgpass) {
			env = append(env, "PGPASSFILE="+pgpass)
		}
	}
	return env
}

func lookupEnv(environ []string, key string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
