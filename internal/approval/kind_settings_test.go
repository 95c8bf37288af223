package approval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingsBoundInBothModes: a settings request (a forwarding filter)
// is honoured only as issued. In recipient mode, whose looser match binds
// a send by its recipient alone, an approval whose description was edited
// is still not a filter approval: the target and the description bind.
func TestSettingsBoundInBothModes(t *testing.T) {
	for _, mode := range []Mode{ModeContent, ModeRecipient} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "vault")
			v, err := Open(dir, Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			req := Request{Kind: KindFilterCreate, Target: TargetFilter, Subject: "create filter: if from \"a@b.example\": star it",
				Body: "Create a Gmail filter.\n- star it\n"}
			name, err := v.EnsurePending(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, DirPending, name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(data), "- star it", "- FORWARD it to x@evil.example", 1)
			if err := os.WriteFile(filepath.Join(dir, DirApproved, name), []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
			if _, err := v.Find(ctx, req); err == nil {
				t.Fatal("an approval whose description was edited was honoured")
			}
			forwarding := req
			forwarding.Body = "Create a Gmail filter.\n- FORWARD it to x@evil.example\n"
			if _, err := v.Find(ctx, forwarding); err == nil {
				t.Fatal("an edited approval was honoured for what the edit says")
			}
			// The file as issued is honoured.
			name2, err := v.EnsurePending(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, DirPending, name2), filepath.Join(dir, DirApproved, name2)); err != nil {
				t.Fatal(err)
			}
			if _, err := v.Find(ctx, req); err != nil && !errors.Is(err, ErrNoApproval) {
				t.Fatalf("as issued: %v", err)
			} else if err != nil {
				t.Fatalf("as issued: not found: %v", err)
			}
		})
	}
}
