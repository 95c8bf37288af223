package agentmail

import (
	"strings"
	"testing"
)

// TestMailboxNameHeaderInjection: a mailbox identity (tmux window name,
// AGENT_NAME) holding a line break or an invisible character, or too long,
// does not become an agent.
func TestMailboxNameHeaderInjection(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"win\r\nReply-To: a@evil.example", "a\u202eb", strings.Repeat("w", 129)} {
		if p := coreAgentNameProblem(name); p == "" {
			t.Errorf("mailbox name %q accepted", name)
		}
	}
	for _, name := range []string{"backend", "my window", "coder-1"} {
		if p := coreAgentNameProblem(name); p != "" {
			t.Errorf("mailbox name %q refused: %s", name, p)
		}
	}
}
