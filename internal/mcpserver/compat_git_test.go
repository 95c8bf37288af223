package mcpserver

import (
	"context"
	"errors"
	"testing"
)

// TestDefaultProjectKey: the compatibility sets' default project is the
// one project key rule's answer for the working directory, the process's
// ("") or the one SetOptions.Dir names (gitrepo.ProjectKey, asked through
// projectKeyOf, not a git process).
func TestDefaultProjectKey(t *testing.T) {
	old := projectKeyOf
	t.Cleanup(func() { projectKeyOf = old })
	var asked []string
	projectKeyOf = func(_ context.Context, dir string) (string, error) {
		asked = append(asked, dir)
		return "/work/top", nil
	}
	if got := defaultProjectKey(""); got != "/work/top" || len(asked) != 1 || asked[0] != "" {
		t.Errorf("defaultProjectKey(\"\") = %q after asking %q", got, asked)
	}
	asked = nil
	if got := (SetOptions{Dir: "/work/top/sub"}).withDefaults().ProjectKey; got != "/work/top" || len(asked) != 1 || asked[0] != "/work/top/sub" {
		t.Errorf("SetOptions{Dir: /work/top/sub}: ProjectKey %q after asking %q", got, asked)
	}
	projectKeyOf = func(context.Context, string) (string, error) { return "", errors.New("no working directory") }
	if got := defaultProjectKey(""); got != "/" {
		t.Errorf("without a working directory: %q", got)
	}
}
