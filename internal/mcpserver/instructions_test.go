package mcpserver

import (
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// TestInstructionsFollowToolSets: the instructions a client receives at
// initialize name only the tool sets the server has (through the protocol).
func TestInstructionsFollowToolSets(t *testing.T) {
	t.Parallel()
	email := newEmailEnv(t, true, nil)
	am := newAMHarness(t)
	both, err := New(Deps{Version: "test", Tools: []string{config.ToolsEmail, config.ToolsAgentMail}, Email: email.deps, AgentMail: am.svc})
	if err != nil {
		t.Fatal(err)
	}
	emailWords := []string{"Gmail", "search_email", "Approved/", "never create approval files yourself"}
	amWords := []string{"message board", "register_agent", "file_reservation_paths"}
	tests := []struct {
		name          string
		got           string
		want, wantNot []string
	}{
		{"email", email.cs.InitializeResult().Instructions, emailWords, amWords},
		{"agentmail", am.cs.InitializeResult().Instructions, amWords, emailWords},
		{"email+agentmail", connect(t, both).InitializeResult().Instructions, append(emailWords, amWords...), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.got, w) {
					t.Errorf("instructions lack %q:\n%s", w, tt.got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(tt.got, w) {
					t.Errorf("instructions mention %q, which this server does not have:\n%s", w, tt.got)
				}
			}
		})
	}
	for _, sets := range [][]string{{config.ToolsChannels}, {config.ToolsMailbox}} {
		if got := instructionsFor(sets); got != "" {
			t.Errorf("%v: instructions %q, want none (the tools describe themselves)", sets, got)
		}
	}
}
