package mcpserver

import (
	"slices"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gmail"
)

// TestEveryEmailToolHasAScope: a new email tool cannot be served without
// saying which OAuth scope it needs.
func TestEveryEmailToolHasAScope(t *testing.T) {
	t.Parallel()
	for _, e := range inventory {
		if e.Set == config.ToolsEmail && e.Scope == "" {
			t.Errorf("email tool %s has no Scope in its inventory row", e.Name)
		}
	}
}

func TestEmailScopes(t *testing.T) {
	t.Parallel()
	want := []string{gmail.ScopeReadonly, gmail.ScopeCompose, gmail.ScopeSend, gmail.ScopeModify, gmail.ScopeSettingsBasic}
	if got := EmailScopes(); !slices.Equal(got, want) {
		t.Fatalf("EmailScopes = %v, want %v", got, want)
	}
	// A token of before (readonly + compose) sends (compose permits it) but
	// leaves out every tool that needs gmail.modify.
	left := EmailToolsLeftOut([]string{gmail.ScopeReadonly, gmail.ScopeCompose})
	if !slices.Contains(left, "modify_labels") || !slices.Contains(left, "untrash_email") || slices.Contains(left, "send_email") || slices.Contains(left, "search_email") {
		t.Fatalf("left out by readonly+compose: %v", left)
	}
	// Filters and the vacation responder are changed with
	// gmail.settings.basic alone: neither gmail.modify nor the full scope
	// stands in (Google's discovery document).
	for _, granted := range [][]string{{gmail.ScopeModify}, {"https://mail.google.com/"}} {
		if left := EmailToolsLeftOut(granted); !slices.Equal(left, []string{"create_filter", "delete_filter", "set_vacation"}) {
			t.Fatalf("%v leaves out %v", granted, left)
		}
	}
	if left := EmailToolsLeftOut([]string{gmail.ScopeModify, gmail.ScopeSettingsBasic}); len(left) != 0 {
		t.Fatalf("gmail.modify and gmail.settings.basic leave out %v", left)
	}
	if by := EmailToolsByScope(); !slices.Contains(by[gmail.ScopeModify], "modify_labels") || !slices.Contains(by[gmail.ScopeReadonly], "read_email") {
		t.Fatalf("by scope: %v", by)
	}
}
