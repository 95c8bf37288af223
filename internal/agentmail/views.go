package agentmail

import "time"

// The types below are the answers of the contract, field for field as the
// reference server (mcp_agent_mail) renders them, so existing clients parse
// them unchanged. Timestamps are ISO-8601 strings in UTC (null when unset);
// fields mailgate adds (notices, held mail, warnings) are omitted when empty,
// so an answer with nothing to report is shaped exactly like the reference's.

// TSLayout is Python's isoformat() for an aware UTC datetime, which is what
// the reference emits and clients parse.
const TSLayout = "2006-01-02T15:04:05.000000+00:00"

func formatTS(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TSLayout)
}

// ts renders t, or null for the zero time.
func ts(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTS(t)
	return &s
}

// viewsOf renders each of xs with view, as a list that is empty, never
// null, when there are none (the reference answers []).
func viewsOf[T, V any](xs []T, view func(T) V) []V {
	out := make([]V, 0, len(xs))
	for _, x := range xs {
		out = append(out, view(x))
	}
	return out
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ProjectView is a project as every answer shows it.
type ProjectView struct {
	ID        int64   `json:"id"`
	Slug      string  `json:"slug"`
	HumanKey  string  `json:"human_key"`
	CreatedAt *string `json:"created_at"`
}

func projectView(p Project) ProjectView {
	return ProjectView{ID: p.ID, Slug: p.Slug, HumanKey: p.HumanKey, CreatedAt: ts(p.CreatedAt)}
}

// EnsureProjectResult is ensure_project's answer. The git-identity fields of
// the reference are always null: mailgate keys projects by directory only.
type EnsureProjectResult struct {
	ProjectView
	IdentityModeUsed string  `json:"identity_mode_used"`
	CanonicalPath    *string `json:"canonical_path"`
	RepoRoot         *string `json:"repo_root"`
	GitCommonDir     *string `json:"git_common_dir"`
	Branch           *string `json:"branch"`
	WorktreeName     *string `json:"worktree_name"`
	CoreIgnorecase   *bool   `json:"core_ignorecase"`
	NormalizedRemote *string `json:"normalized_remote"`
	ProjectUID       string  `json:"project_uid"`
	Discovery        any     `json:"discovery"`
}

// AgentView is an agent as directories list it.
type AgentView struct {
	ID                int64   `json:"id"`
	Name              string  `json:"name"`
	Program           string  `json:"program"`
	Model             string  `json:"model"`
	TaskDescription   string  `json:"task_description"`
	InceptionTS       *string `json:"inception_ts"`
	LastActiveTS      *string `json:"last_active_ts"`
	ProjectID         int64   `json:"project_id"`
	AttachmentsPolicy string  `json:"attachments_policy"`
}

func agentView(a Agent) AgentView {
	return AgentView{ID: a.ID, Name: a.Name, Program: a.Program, Model: a.Model, TaskDescription: a.TaskDescription,
		InceptionTS: ts(a.InceptionAt), LastActiveTS: ts(a.LastActiveAt), ProjectID: a.ProjectID, AttachmentsPolicy: a.AttachmentsPolicy}
}

// capabilities are what every agent may do (the reference's default set).
var capabilities = []string{"send_message", "fetch_inbox", "file_reservation_paths", "acknowledge_message"}

// AgentCard is an agent with what it may do, as its profile and whois
// show it (ReaperExempt is the reference's; mailgate leaves it false).
type AgentCard struct {
	AgentView
	ReaperExempt bool     `json:"reaper_exempt"`
	Capabilities []string `json:"capabilities"`
}

func agentCard(a Agent) AgentCard {
	return AgentCard{AgentView: agentView(a), Capabilities: capabilities}
}

// AgentProfile is register_agent's and create_agent_identity's answer.
// RequestedName and NameNotice appear only when the agent did not get the
// name it asked for, so a renamed agent always learns its real name.
type AgentProfile struct {
	AgentCard
	RequestedName string `json:"requested_name,omitempty"`
	NameNotice    string `json:"name_notice,omitempty"`
	// RegistrationToken proves, in a later register_agent from another
	// session (a restarted agent), that the caller is this agent.
	RegistrationToken string `json:"registration_token,omitempty"`
}

// WhoisResult is whois's answer. mailgate keeps no git archive, so
// recent_commits is always empty.
type WhoisResult struct {
	AgentCard
	RecentCommits []any `json:"recent_commits"`
}

// AgentDirEntry is one agent of resource://agents.
type AgentDirEntry struct {
	AgentView
	UnreadCount int `json:"unread_count"`
}

// MessageCore holds the fields every message rendering shares. BodyMD is
// omitted unless bodies were asked for.
type MessageCore struct {
	ID          int64   `json:"id"`
	ProjectID   int64   `json:"project_id"`
	SenderID    int64   `json:"sender_id"`
	ThreadID    *string `json:"thread_id"`
	Subject     string  `json:"subject"`
	Importance  string  `json:"importance"`
	AckRequired bool    `json:"ack_required"`
	CreatedTS   *string `json:"created_ts"`
	Attachments []any   `json:"attachments"`
	BodyMD      *string `json:"body_md,omitempty"`
	From        string  `json:"from"`
}

func messageCore(m Message, withBody bool) MessageCore {
	c := MessageCore{ID: m.ID, ProjectID: m.ProjectID, SenderID: m.SenderID, ThreadID: strOrNil(m.ThreadID),
		Subject: m.Subject, Importance: string(m.Importance), AckRequired: m.AckRequired, CreatedTS: ts(m.CreatedAt),
		Attachments: attachmentViews(m.Attachments), From: m.SenderName}
	if withBody {
		b := m.BodyMD
		c.BodyMD = &b
	}
	return c
}

// MessagePayload is a message with its addressing, as its sender and the
// message/thread resources see it.
type MessagePayload struct {
	MessageCore
	To  []string `json:"to"`
	CC  []string `json:"cc"`
	BCC []string `json:"bcc"`
}

func messagePayload(m Message, withBody bool) MessagePayload {
	p := MessagePayload{MessageCore: messageCore(m, withBody), To: []string{}, CC: []string{}, BCC: []string{}}
	for _, r := range m.Recipients {
		switch r.Kind {
		case KindTo:
			p.To = append(p.To, r.AgentName)
		case KindCC:
			p.CC = append(p.CC, r.AgentName)
		case KindBCC:
			p.BCC = append(p.BCC, r.AgentName)
		}
	}
	return p
}

// InboxEntry is one copy in an inbox listing (resources, macros).
type InboxEntry struct {
	MessageCore
	Kind string `json:"kind"`
}

// FetchEntry is one copy as fetch_inbox shows it: with its read and ack
// state, which fetching never changes.
type FetchEntry struct {
	InboxEntry
	ReadTS *string `json:"read_ts"`
	AckTS  *string `json:"ack_ts"`
}

// Delivery groups a sent message by recipient project.
type Delivery struct {
	Project string         `json:"project"`
	Payload MessagePayload `json:"payload"`
}

// HeldNotice tells a sender that a recipient's policy holds the message.
type HeldNotice struct {
	Agent  string `json:"agent"`
	Policy string `json:"policy"`
	Reason string `json:"reason"`
	Remedy string `json:"remedy"`
}

// SendResult is send_message's answer.
type SendResult struct {
	Deliveries     []Delivery   `json:"deliveries"`
	Count          int          `json:"count"`
	Attachments    []any        `json:"attachments"`
	VerifiedSender bool         `json:"verified_sender"`
	Held           []HeldNotice `json:"held,omitempty"`
	Warnings       []string     `json:"warnings,omitempty"`
}

// ReplyResult is reply_message's answer: the reply itself plus its deliveries.
type ReplyResult struct {
	MessagePayload
	ReplyTo        int64        `json:"reply_to"`
	Deliveries     []Delivery   `json:"deliveries"`
	Count          int          `json:"count"`
	VerifiedSender bool         `json:"verified_sender"`
	Held           []HeldNotice `json:"held,omitempty"`
	Warnings       []string     `json:"warnings,omitempty"`
}

// ReadResult is mark_message_read's answer.
type ReadResult struct {
	MessageID int64   `json:"message_id"`
	Read      bool    `json:"read"`
	ReadAt    *string `json:"read_at"`
}

// AckResult is acknowledge_message's answer.
type AckResult struct {
	MessageID      int64   `json:"message_id"`
	Acknowledged   bool    `json:"acknowledged"`
	AcknowledgedAt *string `json:"acknowledged_at"`
	ReadAt         *string `json:"read_at"`
}

// SearchHit is one search result. ack_required is 0/1 as in the reference.
type SearchHit struct {
	ID          int64    `json:"id"`
	Subject     string   `json:"subject"`
	Importance  string   `json:"importance"`
	AckRequired int      `json:"ack_required"`
	CreatedTS   *string  `json:"created_ts"`
	ThreadID    *string  `json:"thread_id"`
	From        string   `json:"from"`
	To          []string `json:"to"`
	CC          []string `json:"cc"`
}

// SearchDiagnostics explains how a query was rewritten or answered; present
// only when the query was not used verbatim.
type SearchDiagnostics struct {
	Query    string   `json:"query"`
	FTSQuery string   `json:"fts_query,omitempty"`
	Mode     string   `json:"mode"` // fts | like
	Notes    []string `json:"notes,omitempty"`
}

// SearchResult is search_messages's answer.
type SearchResult struct {
	Result      []SearchHit        `json:"result"`
	Diagnostics *SearchDiagnostics `json:"diagnostics,omitempty"`
}

// InboxResource is resource://inbox.
type InboxResource struct {
	Project  string       `json:"project"`
	Agent    string       `json:"agent"`
	Count    int          `json:"count"`
	Messages []InboxEntry `json:"messages"`
}

// ThreadResource is resource://thread.
type ThreadResource struct {
	Project   string           `json:"project"`
	ThreadID  string           `json:"thread_id"`
	Limit     int              `json:"limit"`
	Truncated bool             `json:"truncated"`
	Messages  []MessagePayload `json:"messages"`
}

// AgentsResource is resource://agents.
type AgentsResource struct {
	Project struct {
		Slug     string `json:"slug"`
		HumanKey string `json:"human_key"`
	} `json:"project"`
	Agents []AgentDirEntry `json:"agents"`
}

// ProjectResource is resource://project.
type ProjectResource struct {
	ProjectView
	Agents []AgentView `json:"agents"`
}

// HealthResult is health_check's answer.
type HealthResult struct {
	Status   string `json:"status"`
	Service  string `json:"service"`
	Projects int    `json:"projects"`
	Time     string `json:"time"`
}
