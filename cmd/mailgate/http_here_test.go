package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// startHTTPServerHere is startHTTPServer without the process: `mailgate
// serve --sandbox --http 127.0.0.1:0` in the test binary (runHTTPServerHere),
// stopped when the test ends as SIGTERM stops the process (main's signal
// context ends), and held to the same clean, complete shutdown. For the
// tests whose subject is what the server answers and logs, not the process
// (TestHTTPBinary and the tests that signal, kill or count processes start
// the binary).
func startHTTPServerHere(t *testing.T, env ...string) *httpServer {
	t.Helper()
	s := runHTTPServerHere(t, []string{"serve", "--sandbox", "--http", "127.0.0.1:0"},
		append([]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir(), "MAILGATE_LOG_LEVEL=info"}, env...),
		func(s *httpServer, err error) {
			if err != nil || !strings.Contains(s.logs(), `msg="HTTP server stopped"`) || strings.Contains(s.logs(), "deadline passed") {
				t.Errorf("after the stop: %v (want a clean, complete shutdown); log:\n%s", err, s.logs())
			}
		})
	if code, _ := httpDo(t, "GET", s.base+"/health/readiness", "", nil); code != 200 {
		t.Fatalf("readiness: %d", code)
	}
	return s
}

// runHTTPServerHere is runHTTPServer in-process: `mailgate args...` (a serve
// --http on port 0) through main's dispatch (run) with exactly env (and GOGC,
// so that serve leaves the test binary's collector alone: setGCPercent), in
// working directory "/", its stderr (with the error main would print) read
// as the process's is. When the test ends its context is cancelled, as
// main's is on SIGTERM, and stopped is given the error its exit status
// stands for (nil for 0).
func runHTTPServerHere(t *testing.T, args, env []string, stopped func(s *httpServer, err error)) *httpServer {
	t.Helper()
	r := newSetupRun(append(append([]string{}, env...), "GOGC=100"), nil, args...)
	r.env.dir = "/"
	stderrR, stderrW := io.Pipe()
	r.env.stderr = stderrW
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := run(ctx, r.env)
		if exitCode(err, stderrW) == 0 {
			err = nil
		}
		stderrW.Close()
		done <- err
	}()
	s := &httpServer{scanned: make(chan struct{})}
	found := s.read(stderrR, nil)
	t.Cleanup(func() {
		cancel()
		<-s.scanned
		stopped(s, <-done)
	})
	s.waitURL(t, found)
	return s
}
