package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
)

// connectEliciting connects a client that answers the server's questions
// with answer (and records them), or a client without the capability
// when answer is nil.
func connectEliciting(t *testing.T, e *emailEnv, answer func(*mcp.ElicitRequest) (*mcp.ElicitResult, error), asked *[]string) *mcp.ClientSession {
	t.Helper()
	srv, err := New(Deps{Version: "test", Tools: []string{"email"}, Email: e.deps})
	if err != nil {
		t.Fatal(err)
	}
	var opts *mcp.ClientOptions
	if answer != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			*asked = append(*asked, req.Params.Message)
			return answer(req)
		}}
	}
	return connectWith(t, srv, opts)
}

// TestElicitApproval: with APPROVAL_ELICIT on and a client that declares
// elicitation, a send asks the human in the client with the email and its
// warnings; accept approves it as a file move does (decided_via says so)
// and it is sent in the same call, once; decline, cancel, accept without
// the box and an error are no (the request waits in Pending_Approval/);
// off, or with a client without the capability, nothing is asked.
func TestElicitApproval(t *testing.T) {
	yes := func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}
	tests := []struct {
		name     string
		elicit   bool
		answer   func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)
		wantSent bool
		wantAsk  bool
	}{
		{"accept", true, yes, true, true},
		{"decline", true, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "decline"}, nil }, false, true},
		{"cancel", true, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return &mcp.ElicitResult{Action: "cancel"}, nil }, false, true},
		{"accept without the box", true, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil
		}, false, true},
		{"client error", true, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, context.DeadlineExceeded }, false, true},
		{"off by default", false, yes, false, false},
		{"client without the capability", true, nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEmailEnv(t, false, nil)
			e.deps.Elicit = tt.elicit
			var asked []string
			cs := connectEliciting(t, e, tt.answer, &asked)
			text, isErr := callTool(t, cs, "send_email", map[string]any{"to": "ann@exаmple.com", "subject": "Report", "body": "Hi Ann,\nthe report.\n"})
			if got := len(asked) > 0; got != tt.wantAsk {
				t.Fatalf("asked = %v, want %v", asked, tt.wantAsk)
			}
			if tt.wantAsk && (!strings.Contains(asked[0], "To: ann@exаmple.com") || !strings.Contains(asked[0], `looks like "ann@example.com"`) ||
				!strings.Contains(asked[0], "the report.")) {
				t.Errorf("the question lacks the email or its warnings:\n%s", asked[0])
			}
			sent := len(e.gm.Sent())
			if tt.wantSent {
				if isErr || !strings.HasPrefix(text, "Email sent successfully") || sent != 1 {
					t.Fatalf("accepted: %q, sent %d", text, sent)
				}
				done, _ := filepath.Glob(filepath.Join(e.vault, approval.DirDone, "*.md"))
				if len(done) != 1 {
					t.Fatalf("Done/ = %v", done)
				}
				if b, _ := os.ReadFile(done[0]); !strings.Contains(string(b), `decided_via: "`+approval.ViaElicit+`"`) {
					t.Errorf("the Done file does not say how it was approved:\n%s", b)
				}
				return
			}
			pending, _ := filepath.Glob(filepath.Join(e.vault, approval.DirPending, "*.md"))
			if !isErr || sent != 0 || len(pending) != 1 {
				t.Fatalf("not approved: %q, sent %d, pending %v", text, sent, pending)
			}
		})
	}
}
