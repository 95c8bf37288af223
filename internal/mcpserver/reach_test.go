package mcpserver

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/config"
)

// TestInventoryReachDeclared: every tool row says what it may touch (file
// roots read and written, Gmail change), and the declaration agrees with
// the row's risk: a tool that sends is gated, a read-only tool writes no
// file and changes no mail, only the email set reaches Gmail.
func TestInventoryReachDeclared(t *testing.T) {
	t.Parallel()
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

// The reach table of docs/threat-model.md and docs/security.md is made
// from the inventory, between these markers.
const (
	reachTableBegin = "<!-- reach table: generated from internal/mcpserver/inventory.go (go test ./internal/mcpserver -run TestReachTableInDocs -update) -->\n"
	reachTableEnd   = "<!-- end of reach table -->\n"
)

var reachDocs = []string{"../../docs/threat-model.md", "../../docs/security.md"}

// reachTable is one row per tool, in the inventory's order.
func reachTable() string {
	var b strings.Builder
	b.WriteString("| Set | Tool | Reads files under | Writes files under | Gmail change | Answer carries an email sender's text |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, e := range inventory {
		sender := "no"
		if e.Reach.SenderText {
			sender = "yes (fenced)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", e.Set, e.Name, e.Reach.Reads, e.Reach.Writes, e.Reach.Gmail, sender)
	}
	return b.String()
}

// TestReachTableInDocs: the docs' reach table is the inventory's. After a
// change to a row: go test ./internal/mcpserver -run TestReachTableInDocs -update
func TestReachTableInDocs(t *testing.T) {
	t.Parallel()
	want := reachTable()
	for _, path := range reachDocs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i, j := strings.Index(doc, reachTableBegin), strings.Index(doc, reachTableEnd)
		if i < 0 || j < i {
			t.Errorf("%s: no reach table markers (%q … %q)", path, reachTableBegin, reachTableEnd)
			continue
		}
		got := doc[i+len(reachTableBegin) : j]
		if got == want {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(reachTableBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the reach table differs from the inventory; run go test ./internal/mcpserver -run TestReachTableInDocs -update", path)
	}
}
