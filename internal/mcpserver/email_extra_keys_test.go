package mcpserver

import (
	"strings"
	"testing"
)

// TestEmailExtraKeysIgnoredAndNamed: the email contract's schemas allow
// keys a tool does not take (no additionalProperties: false), so a call
// with one does what it would do without it, and its answer ends by naming
// what was ignored (a misspelt key had no effect). Before, such a call was
// refused ("unexpected additional properties").
func TestEmailExtraKeysIgnoredAndNamed(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	tests := []struct {
		name, tool string
		args       map[string]any
		prefix     string // the answer without the extra keys
		isError    bool
		note       string
	}{
		{"read", "search_email", map[string]any{"query": "invoice", "format": "full"}, `Found 1 email matching "invoice":`, false,
			`Note: search_email does not take "format"; ignored.`},
		{"gated send, two keys", "send_email", map[string]any{"to": "bob@example.org", "subject": "Hi", "body": "Hello.", "priority": "high", "cc_me": true}, "Rejected", true,
			`Note: send_email does not take "cc_me" and "priority"; ignored.`},
		{"a refusal still names them", "read_email", map[string]any{"mesage_id": "abc"}, "Error: give message_id or thread_id", true,
			`Note: read_email does not take "mesage_id"; ignored.`},
		{"a missing argument still refused", "reply_email", map[string]any{"body": "x", "threadid": "t"}, "Error: thread_id is required: reply_email needs thread_id, message_id and body", true,
			`Note: reply_email does not take "threadid"; ignored.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := callTool(t, e.cs, tt.tool, tt.args)
			if isErr != tt.isError || !strings.HasPrefix(text, tt.prefix) || !strings.HasSuffix(text, "\n\n"+tt.note) {
				t.Fatalf("%s = (%v) %q; want (%v) %q… ending %q", tt.tool, isErr, text, tt.isError, tt.prefix, tt.note)
			}
		})
	}
}
