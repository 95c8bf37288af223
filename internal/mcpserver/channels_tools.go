package mcpserver

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
)

// The channels tool set (MAILGATE_TOOLS=channels): the nine tools of the
// register/heartbeat/claims/changes coordination server, with its argument
// names, answer shapes and error texts, over channels.Set. Stale
// agents are swept inside calls (see channels.Set.Sweep), so the set
// works when every agent runs its own stdio process and no daemon is alive.
// The tools are listed in the inventory (inventory.go).

type chRegisterIn struct {
	Name string `json:"name" jsonschema:"human-readable agent name, e.g. coder-1 (need not be unique)"`
	Role string `json:"role" jsonschema:"agent role, e.g. coder or reviewer"`
}

type chAgentIn struct {
	AgentID string `json:"agent_id" jsonschema:"the agent_id register returned"`
}

type chSendIn struct {
	AgentID string `json:"agent_id" jsonschema:"sender's agent_id"`
	Channel string `json:"channel,omitempty" jsonschema:"target channel (default broadcast)"`
	Subject string `json:"subject" jsonschema:"message subject"`
	Body    string `json:"body" jsonschema:"message body" maxLength:"1048576"`
}

type chReadIn struct {
	AgentID string `json:"agent_id" jsonschema:"requesting agent_id"`
	Since   string `json:"since,omitempty" jsonschema:"RFC 3339 timestamp: only messages created after it"`
	Channel string `json:"channel,omitempty" jsonschema:"only this channel (default: every channel)"`
}

type chFilesIn struct {
	AgentID string   `json:"agent_id" jsonschema:"your agent_id"`
	Files   []string `json:"files" jsonschema:"file paths relative to the project root; ./a/b.go and a/b.go are the same file" maxItems:"1000" maxLength:"1024"`
}

type chClaimsIn struct {
	Files []string `json:"files,omitempty" jsonschema:"only claims on these files (default: every active claim)" maxItems:"1000" maxLength:"1024"`
}

type chAnnounceIn struct {
	AgentID  string `json:"agent_id" jsonschema:"announcing agent_id"`
	FilePath string `json:"file_path" jsonschema:"path of the modified file" maxLength:"1024"`
	Summary  string `json:"summary" jsonschema:"what changed" maxLength:"1048576"`
}

type chChangesIn struct {
	Since   string `json:"since,omitempty" jsonschema:"RFC 3339 timestamp: only changes announced after it"`
	AgentID string `json:"agent_id,omitempty" jsonschema:"only changes by this agent_id"`
}

// chTools are the set's handlers over the project's channels.
type chTools struct{ ch *channels.Set }

func newCHTools(d Deps) *chTools {
	o := d.SetOptions.withDefaults()
	return &chTools{ch: channels.New(d.AgentMail, d.SetStores.Channels(), channels.Options{ProjectKey: o.ProjectKey, StaleAfter: o.StaleAfter, SweepInterval: o.SweepInterval})}
}

// The handlers, in the inventory's order.

func (t *chTools) register(ctx context.Context, in chRegisterIn) (channels.RegisterResult, error) {
	return t.ch.Register(ctx, in.Name, in.Role)
}

func (t *chTools) heartbeat(ctx context.Context, in chAgentIn) (channels.OK, error) {
	return t.ch.Heartbeat(ctx, in.AgentID)
}

func (t *chTools) sendMessage(ctx context.Context, in chSendIn) (channels.SendResult, error) {
	return t.ch.SendMessage(ctx, in.AgentID, in.Channel, in.Subject, in.Body)
}

func (t *chTools) readMessages(ctx context.Context, in chReadIn) (channels.MessagesResult, error) {
	return t.ch.ReadMessages(ctx, in.AgentID, in.Since, in.Channel)
}

func (t *chTools) claimFiles(ctx context.Context, in chFilesIn) (channels.ClaimResult, error) {
	return t.ch.ClaimFiles(ctx, in.AgentID, in.Files)
}

func (t *chTools) releaseFiles(ctx context.Context, in chFilesIn) (channels.ReleaseResult, error) {
	return t.ch.ReleaseFiles(ctx, in.AgentID, in.Files)
}

func (t *chTools) getFileClaims(ctx context.Context, in chClaimsIn) (channels.ClaimsResult, error) {
	return t.ch.GetFileClaims(ctx, in.Files)
}

func (t *chTools) announceChange(ctx context.Context, in chAnnounceIn) (channels.AnnounceResult, error) {
	return t.ch.AnnounceChange(ctx, in.AgentID, in.FilePath, in.Summary)
}

func (t *chTools) getChanges(ctx context.Context, in chChangesIn) (channels.ChangesResult, error) {
	return t.ch.GetChanges(ctx, in.Since, in.AgentID)
}
