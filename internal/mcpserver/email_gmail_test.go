package mcpserver

import (
	"strings"
	"testing"
)

// TestGmailAsNamesWhatIsMissing: a mailbox without a tool's own Gmail call
// (a test's wrapper that does not embed *gmail.Client) is an error naming
// the interface, not a panic.
func TestGmailAsNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	type onlyMailbox struct{ Mailbox }
	_, err := gmailAs[listHeaders](&emailCall{gm: onlyMailbox{}})
	if err == nil || !strings.Contains(err.Error(), "mcpserver.listHeaders") {
		t.Fatalf("gmailAs = %v, want an error naming mcpserver.listHeaders", err)
	}
}
