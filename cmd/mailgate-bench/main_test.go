package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBenchMailgateAlone runs the comparison without a peer on the built
// binary (MAILGATE_BIN), a few calls per phase: every phase's row is
// printed and no ratio column appears.
func TestBenchMailgateAlone(t *testing.T) {
	bin := os.Getenv("MAILGATE_BIN")
	if bin == "" {
		t.Skip("MAILGATE_BIN is not set (make test-go sets it)")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	t.Setenv("TMPDIR", t.TempDir())
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-mailgate", bin, "-peer", "", "-calls", "10"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errs.String())
	}
	for _, row := range []string{"send ", "receive ", "status + list-recipients", "start to initialize answer", "RSS after tools/list"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("no %q row in\n%s", row, out.String())
		}
	}
	if strings.Contains(out.String(), "÷") {
		t.Errorf("ratios printed without a peer:\n%s", out.String())
	}
}

// TestBenchFlags: out-of-range call counts are refused.
func TestBenchFlags(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-calls", "1"}, &out, &errs); code != 2 {
		t.Fatalf("-calls 1: exit %d, want 2", code)
	}
}
