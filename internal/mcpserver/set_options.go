package mcpserver

import (
	"context"
	"os"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/gitrepo"
)

// SetStores are the storage ports of the channels and mailbox sets, on the
// agent-mail store's database (amstore.Store implements it).
type SetStores interface {
	Channels() channels.Store
	Mailboxes() mailboxset.Store
}

// projectKeyOf is the project key rule (gitrepo.ProjectKey runs git; tests
// may stand in for it).
var projectKeyOf = gitrepo.ProjectKey

// SetOptions configure the two compatibility tool sets (channels and
// mailbox; see docs/compat.md). The zero value is usable.
type SetOptions struct {
	// ProjectKey is the absolute path of the project both sets live in (its
	// claims, channels and mailboxes). Default: the git top level of Dir,
	// else Dir.
	ProjectKey string
	// Dir is the working directory the default ProjectKey is found from.
	// Default: the process's (a command run in-process has its own).
	Dir string
	// StaleAfter is how long a channels agent may go without a heartbeat
	// before it is cleaned up. Default 2 minutes.
	StaleAfter time.Duration
	// SweepInterval is the least time between two stale sweeps of one
	// process (sweeps run inside calls). Default 30 seconds.
	SweepInterval time.Duration
	// AgentName is the mailbox identity outside tmux. Default $AGENT_NAME.
	AgentName string
	// Getenv reads the environment (TMUX, TMUX_PANE, AGENT_NAME). Default os.Getenv.
	Getenv func(string) string
}

func (o SetOptions) withDefaults() SetOptions {
	o = o.withDefaultsButProject()
	if o.ProjectKey == "" {
		o.ProjectKey = defaultProjectKey(o.Dir)
	}
	return o
}

// withDefaultsButProject is withDefaults leaving an empty ProjectKey empty
// (its default takes a git process: the mailbox set finds it on first use).
func (o SetOptions) withDefaultsButProject() SetOptions {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	return o
}

// defaultProjectKey is the project key of the working directory dir ("" is
// the process's): its git top level, where the original mailbox system
// keeps its store, else the directory (gitrepo.ProjectKey).
func defaultProjectKey(dir string) string {
	if key, err := projectKeyOf(context.Background(), dir); err == nil {
		return key
	}
	return "/"
}
