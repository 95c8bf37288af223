package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail/channels"
)

// The channels tool set (MAILGATE_TOOLS=channels): the nine tools of the
// register/heartbeat/claims/changes coordination server, with its argument
// names, answer shapes and error texts, over channels.Set. Stale
// agents are swept inside calls (see channels.Set.Sweep), so the set
// works when every agent runs its own stdio process and no daemon is alive.

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
	Body    string `json:"body" jsonschema:"message body"`
}

type chReadIn struct {
	AgentID string `json:"agent_id" jsonschema:"requesting agent_id"`
	Since   string `json:"since,omitempty" jsonschema:"RFC 3339 timestamp: only messages created after it"`
	Channel string `json:"channel,omitempty" jsonschema:"only this channel (default: every channel)"`
}

type chFilesIn struct {
	AgentID string   `json:"agent_id" jsonschema:"your agent_id"`
	Files   []string `json:"files" jsonschema:"file paths relative to the project root; ./a/b.go and a/b.go are the same file"`
}

type chClaimsIn struct {
	Files []string `json:"files,omitempty" jsonschema:"only claims on these files (default: every active claim)"`
}

type chAnnounceIn struct {
	AgentID  string `json:"agent_id" jsonschema:"announcing agent_id"`
	FilePath string `json:"file_path" jsonschema:"path of the modified file"`
	Summary  string `json:"summary" jsonschema:"what changed"`
}

type chChangesIn struct {
	Since   string `json:"since,omitempty" jsonschema:"RFC 3339 timestamp: only changes announced after it"`
	AgentID string `json:"agent_id,omitempty" jsonschema:"only changes by this agent_id"`
}

// addChannelsTools registers the channels compatibility set.
func addChannelsTools(s *mcp.Server, d Deps) {
	o := d.Compat.withDefaults()
	ch := channels.New(d.AgentMail, d.Dialects.Channels(), channels.Options{ProjectKey: o.ProjectKey, StaleAfter: o.StaleAfter, SweepInterval: o.SweepInterval})
	t := &amTools{svc: d.AgentMail, log: d.AgentMail.Logger(), args: argsChannels}

	amAddTyped(s, t, &mcp.Tool{Name: "register", Description: "Register a new agent with the coordination server; call it once, first. " +
		"Answers {agent_id}: a server-made UUID every other tool needs. Send heartbeat at least every 60 s: agents silent for 2 minutes are " +
		"removed, their file claims released and an agent-stale message sent on the broadcast channel.",
		Annotations: amAnnotate("Register agent", false, false, false)},
		func(ctx context.Context, in chRegisterIn) (channels.RegisterResult, error) {
			return ch.Register(ctx, in.Name, in.Role)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "heartbeat", Description: "Tell the server this agent is alive (at least every 60 s). Answers {ok: true}.",
		Annotations: amAnnotate("Heartbeat", false, true, false)},
		func(ctx context.Context, in chAgentIn) (channels.OK, error) { return ch.Heartbeat(ctx, in.AgentID) })

	amAddTyped(s, t, &mcp.Tool{Name: "send_message", Description: "Send a message to other agents on a named channel " +
		"(default broadcast, which every agent should read). Answers {message_id}.",
		Annotations: amAnnotate("Send message", false, false, false)},
		func(ctx context.Context, in chSendIn) (channels.SendResult, error) {
			return ch.SendMessage(ctx, in.AgentID, in.Channel, in.Subject, in.Body)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "read_messages", Description: "Read channel messages, oldest first, optionally only those after " +
		"since (RFC 3339; pass the last created_at you saw) and on one channel. Watch for agent-stale on broadcast: that agent's claims are free.",
		Annotations: amAnnotate("Read messages", true, true, false)},
		func(ctx context.Context, in chReadIn) (channels.MessagesResult, error) {
			return ch.ReadMessages(ctx, in.AgentID, in.Since, in.Channel)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "claim_files", Description: "Claim advisory locks on files you will modify. Answers {claimed, conflicts}: " +
		"files another agent holds are listed in conflicts with held_by and are not claimed; the rest are. Re-claiming your own file is a no-op.",
		Annotations: amAnnotate("Claim files", false, true, false)},
		func(ctx context.Context, in chFilesIn) (channels.ClaimResult, error) {
			return ch.ClaimFiles(ctx, in.AgentID, in.Files)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "release_files", Description: "Release your claims on files. Answers {released}: the files that were yours and are now free.",
		Annotations: amAnnotate("Release files", false, true, false)},
		func(ctx context.Context, in chFilesIn) (channels.ReleaseResult, error) {
			return ch.ReleaseFiles(ctx, in.AgentID, in.Files)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "get_file_claims", Description: "List active file claims (every agent's), optionally only those on the given files. " +
		"Needs no agent_id. Reservations made with the agentmail tool set are listed too (agent_id is then the agent's name).",
		Annotations: amAnnotate("Get file claims", true, true, false)},
		func(ctx context.Context, in chClaimsIn) (channels.ClaimsResult, error) {
			return ch.GetFileClaims(ctx, in.Files)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "announce_change", Description: "Announce that you modified a file, with a summary, so others can react. Answers {change_id}.",
		Annotations: amAnnotate("Announce change", false, false, false)},
		func(ctx context.Context, in chAnnounceIn) (channels.AnnounceResult, error) {
			return ch.AnnounceChange(ctx, in.AgentID, in.FilePath, in.Summary)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "get_changes", Description: "List change announcements, oldest first, optionally only after since (RFC 3339) " +
		"and by one agent_id. Needs no agent_id of your own.",
		Annotations: amAnnotate("Get changes", true, true, false)},
		func(ctx context.Context, in chChangesIn) (channels.ChangesResult, error) {
			return ch.GetChanges(ctx, in.Since, in.AgentID)
		})
}
