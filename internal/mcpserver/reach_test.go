package mcpserver

import (
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// TestInventoryReachDeclared: every tool row says what it may touch (file
// roots read and written, Gmail change), and the declaration agrees with
// the row's risk: a tool that sends is gated, a read-only tool writes no
// file and changes no mail, only the email set reaches Gmail.
func TestInventoryReachDeclared(t *testing.T) {
	const known = NoFiles | RootProject | RootAttachments | RootDownloads | RootVault
	for _, e := range inventory {
		r := e.Reach
		for what, f := range map[string]FileRoots{"Reads": r.Reads, "Writes": r.Writes} {
			switch {
			case f == 0:
				t.Errorf("%s: Reach.%s not declared (NoFiles for none)", e.Name, what)
			case f&NoFiles != 0 && f != NoFiles:
				t.Errorf("%s: Reach.%s is NoFiles and %v at once", e.Name, what, f&^NoFiles)
			case f&^known != 0:
				t.Errorf("%s: Reach.%s has an unknown root %#x", e.Name, what, uint8(f&^known))
			}
		}
		if r.Gmail < GmailNone || r.Gmail > GmailGated {
			t.Errorf("%s: Reach.Gmail not declared", e.Name)
		}
		if e.Set != config.ToolsEmail && (r.Gmail != GmailNone || r.SenderText) {
			t.Errorf("%s: only the email set reaches Gmail or answers with an email sender's text", e.Name)
		}
		if e.Risk == RiskSends && r.Gmail != GmailGated {
			t.Errorf("%s sends mail but its reach is %v, not gated", e.Name, r.Gmail)
		}
		if e.Set == config.ToolsEmail && e.Risk == RiskDestructive && r.Gmail != GmailGated {
			t.Errorf("%s destroys mail but its reach is %v, not gated", e.Name, r.Gmail)
		}
		if e.Risk == RiskReadOnly && (r.Writes != NoFiles || r.Gmail != GmailNone) {
			t.Errorf("%s is read-only but declares writes (%v) or a Gmail change (%v)", e.Name, r.Writes, r.Gmail)
		}
		if r.Writes&RootVault != 0 && r.Gmail != GmailGated {
			t.Errorf("%s writes request files but is not gated", e.Name)
		}
	}
}
