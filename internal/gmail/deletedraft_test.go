package gmail

import (
	"context"
	"errors"
	"testing"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// TestDeleteDraft: a deleted draft is gone (get and a second delete answer
// ErrDraftNotFound), a 503 is retried, and a token without gmail.compose
// gets a *PermissionError naming it.
func TestDeleteDraft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, nil)
	id, err := e.c.CreateDraft(ctx, buildRaw(t, "bob@example.org", "to delete", "d"), "")
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Inject(localgmail.Fault{Op: "drafts.delete", Status: 503})
	if err := e.c.DeleteDraft(ctx, id); err != nil {
		t.Fatalf("DeleteDraft after a 503: %v", err)
	}
	e.wantCalls(t, "drafts.delete", 2, "one retry")
	if _, err := e.c.GetDraft(ctx, id); !errors.Is(err, ErrDraftNotFound) {
		t.Errorf("GetDraft after delete: %v", err)
	}
	if err := e.c.DeleteDraft(ctx, id); !errors.Is(err, ErrDraftNotFound) {
		t.Errorf("second DeleteDraft: %v", err)
	}

	ro := newEnv(t, []string{ScopeReadonly})
	var pe *PermissionError
	if err := ro.c.DeleteDraft(ctx, id); !errors.As(err, &pe) || pe.Scope != ScopeCompose {
		t.Errorf("DeleteDraft with gmail.readonly only: %v", err)
	}
}
