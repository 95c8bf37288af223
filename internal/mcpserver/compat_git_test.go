package mcpserver

import (
	"context"
	"errors"
	"os"
	"testing"
)

// TestDefaultProjectKey: the default project is git's top level, else the
// working directory (asked through gitTopLevel, not a git process).
func TestDefaultProjectKey(t *testing.T) {
	old := gitTopLevel
	t.Cleanup(func() { gitTopLevel = old })
	gitTopLevel = func(context.Context) (string, error) { return "/work/top", nil }
	if got := defaultProjectKey(); got != "/work/top" {
		t.Errorf("inside a repository: %q", got)
	}
	gitTopLevel = func(context.Context) (string, error) { return "", errors.New("not a git repository") }
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if got := defaultProjectKey(); got != wd {
		t.Errorf("outside a repository: %q, want the working directory %q", got, wd)
	}
}
