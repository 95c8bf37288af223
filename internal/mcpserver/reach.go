package mcpserver

import "strings"

// Reach is what a tool may touch outside mailgate's own store, declared on
// its inventory row (ToolEntry.Reach) so that one test (reach_test.go) can
// walk every tool and try to make it touch more, and the reach table of
// docs/threat-model.md is generated from the same rows. A row without a
// declaration fails TestInventoryReachDeclared: the next tool cannot be
// added without saying what it reaches.
type Reach struct {
	// Reads and Writes are the file roots the tool opens files under, from
	// paths an agent gives or names a sender wrote. NoFiles says "none"
	// explicitly; the zero value is "not declared".
	Reads, Writes FileRoots
	// Gmail is the change the tool makes to the mailbox.
	Gmail GmailChange
	// SenderText: the answer can carry text an email's sender (a stranger)
	// wrote: subjects, names, snippets, bodies, file names. (Agent-mail
	// answers are the contract's JSON, between the user's own agents.) Every such answer must fence that text: the fence walk
	// (TestEverySenderFieldFenced) walks the tools with this flag.
	SenderText bool
}

// FileRoots is a set of file roots.
type FileRoots uint8

const (
	// NoFiles: the tool opens no file from an agent's path or a sender's name.
	NoFiles FileRoots = 1 << iota
	// RootProject: the agent-mail project tree (attachment_paths are read
	// inside it; staleness looks at file times in it; .agentmailignore).
	RootProject
	// RootAttachments: the email attachments folder (ATTACHMENTS_DIR).
	RootAttachments
	// RootDownloads: the downloads folder under mailgate's home.
	RootDownloads
	// RootVault: the approval vault: request files mailgate names itself
	// (never a path an agent gives).
	RootVault
)

var rootNames = []struct {
	r    FileRoots
	name string
}{{RootProject, "project tree"}, {RootAttachments, "attachments folder"}, {RootDownloads, "downloads folder"}, {RootVault, "vault (request files)"}}

func (f FileRoots) String() string {
	if f == NoFiles {
		return "none"
	}
	var names []string
	for _, r := range rootNames {
		if f&r.r != 0 {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return "undeclared"
	}
	return strings.Join(names, ", ")
}

// GmailChange is the most a tool changes in the user's Gmail.
type GmailChange int

const (
	// GmailNone: reads at most.
	GmailNone GmailChange = iota + 1
	// GmailOrganise: reversible organisation (labels, drafts, out of the
	// trash): no approval, audited and limited (ORGANIZE_LIMIT).
	GmailOrganise
	// GmailGated: anything that can deliver or destroy mail (a send, a
	// forward, trash, a filter): done only after the human approved exactly
	// this change.
	GmailGated
)

func (g GmailChange) String() string {
	switch g {
	case GmailNone:
		return "none"
	case GmailOrganise:
		return "reversible (drafts, labels, out of the trash; no approval)"
	case GmailGated:
		return "gated (needs approval)"
	}
	return "undeclared"
}

// Reach shorthands for the rows.
var (
	reachNone       = Reach{Reads: NoFiles, Writes: NoFiles, Gmail: GmailNone}
	reachSenderText = Reach{Reads: NoFiles, Writes: NoFiles, Gmail: GmailNone, SenderText: true}
)
