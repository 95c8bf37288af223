package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

// Helpers for running the setup commands (auth, doctor, approvals,
// claude-config) in-process with their own streams and environment.

// setupRun is one in-process command run.
type setupRun struct {
	env            *environment
	stdout, stderr *testutil.Buffer
}

// newSetupRun builds an environment from "K=V" pairs (later ones win), as
// a shell would pass them.
func newSetupRun(vars []string, stdin io.Reader, args ...string) *setupRun {
	m := map[string]string{}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	r := &setupRun{stdout: &testutil.Buffer{}, stderr: &testutil.Buffer{}}
	r.env = &environment{args: args, getenv: func(k string) string { return m[k] }, stdin: stdin, stdout: r.stdout, stderr: r.stderr}
	return r
}

// run executes the command through run (main's dispatch) and returns its
// exit status as main would compute it.
func (r *setupRun) run(t *testing.T) int {
	t.Helper()
	return exitCode(run(context.Background(), r.env), r.stderr)
}
