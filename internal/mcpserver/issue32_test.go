package mcpserver

import (
	"strings"
	"testing"
)

// Issue 32's reproductions of items 2 (HTML), 4 (sender text outside the
// fence) and 6 (quoted local parts), through the real protocol against the
// local Gmail server.

// TestQuotedLocalPartRefused (item 6): "ceo@mycompany.com"@evil.test reads
// as an address at mycompany.com and goes to evil.test. Every tool that
// takes a recipient refuses it, naming the real domain, before any request
// file is written.
func TestQuotedLocalPartRefused(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	const evil = `"ceo@mycompany.com"@evil.test`
	for _, args := range []map[string]any{
		{"to": evil, "subject": "Q3", "body": "Numbers attached."},
		{"to": "alice@example.com", "cc": []any{evil}, "subject": "Q3", "body": "Numbers."},
		{"to": "alice@example.com", "bcc": []any{`CEO <"ceo@mycompany.com"@evil.test>`}, "subject": "Q3", "body": "Numbers."},
	} {
		for _, tool := range []string{"send_email", "draft_email"} {
			text, isErr := callTool(t, e.cs, tool, args)
			if !isErr || !strings.HasPrefix(text, "Error: Invalid email address format: ") || !strings.Contains(text, "goes to the domain evil.test") {
				t.Errorf("%s %v: (isError=%v) %q", tool, args, isErr, text)
			}
		}
	}
	if n := len(pendingNames(t, e)); n != 0 {
		t.Fatalf("%d request files written", n)
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
}
