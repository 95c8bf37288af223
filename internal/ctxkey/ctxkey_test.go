package ctxkey

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestKeysAreDistinct: a value is read back only through the key that
// stored it, even beside another key of the same name and type; a key with
// nothing stored reads T's zero value.
func TestKeysAreDistinct(t *testing.T) {
	t.Parallel()
	a, b := New[string]("id"), New[string]("id")
	n := New[int]("count")
	ctx := a.With(context.Background(), "alpha")
	ctx = n.With(ctx, 7)
	if got := a.Value(ctx); got != "alpha" {
		t.Errorf("a.Value = %q, want alpha", got)
	}
	if got := b.Value(ctx); got != "" {
		t.Errorf("b.Value = %q, want \"\" (another key of the same name)", got)
	}
	if got := n.Value(ctx); got != 7 {
		t.Errorf("n.Value = %d, want 7", got)
	}
	if got := a.Value(b.With(ctx, "beta")); got != "alpha" {
		t.Errorf("a.Value after b.With = %q, want alpha", got)
	}
	if got := New[func()]("f").Value(ctx); got != nil {
		t.Error("an unset func key reads non-nil")
	}
	if s := fmt.Sprint(ctx); !strings.Contains(s, "count") {
		t.Errorf("the context prints as %q, without the key's name", s)
	}
}
