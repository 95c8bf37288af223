package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Inputs of the agent-mail tools. Argument names are the reference
// server's, including the ones mailgate accepts and ignores (format,
// registration_token, llm_mode, …): inferred schemas refuse unknown
// properties, and a client written for the reference must not be refused
// for sending them.

// amStrList accepts a JSON list of strings or a single string (clients often
// send "to": "BlueLake"; the reference accepts both).
type amStrList []string

func (l *amStrList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = nil
		for _, part := range strings.Split(s, ",") {
			if p := strings.TrimSpace(part); p != "" {
				*l = append(*l, p)
			}
		}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return err
	}
	*l = ss
	return nil
}

// amInt accepts a JSON integer or a string holding one (message ids are
// integers, but some clients quote them).
type amInt int64

func (n *amInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a message id (ids are integers, as returned by send_message and fetch_inbox)", s)
		}
		*n = amInt(v)
		return nil
	}
	var v int64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = amInt(v)
	return nil
}

func amInts(l []amInt) []int64 {
	out := make([]int64, len(l))
	for i, v := range l {
		out[i] = int64(v)
	}
	return out
}

var amFlexSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[amStrList](): {Types: []string{"array", "string"}, Items: &jsonschema.Schema{Type: "string"}},
	reflect.TypeFor[amInt]():     {Types: []string{"integer", "string"}},
}

// amInputSchema infers T's schema with the flexible types above.
func amInputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: amFlexSchemas})
	if err != nil {
		panic(fmt.Sprintf("inferring input schema for %T: %v", *new(T), err))
	}
	return s
}

// amCompat are arguments of the reference that mailgate accepts and ignores.
type amCompat struct {
	Format            string `json:"format,omitempty" jsonschema:"answer format; only json is produced (accepted for compatibility)"`
	RegistrationToken string `json:"registration_token,omitempty" jsonschema:"register_agent, macro_start_session, macro_prepare_thread: the registration_token your first registration of the name answered, to resume it from a new session; ignored elsewhere"`
}

type amHealthIn struct {
	amCompat
}

type amEnsureProjectIn struct {
	HumanKey     string `json:"human_key" jsonschema:"absolute path of the project's working directory, e.g. /data/projects/app"`
	IdentityMode string `json:"identity_mode,omitempty" jsonschema:"accepted for compatibility; projects are keyed by directory"`
	amCompat
}

type amRegisterIn struct {
	ProjectKey        string  `json:"project_key" jsonschema:"project's absolute path (as given to ensure_project) or its slug"`
	Name              string  `json:"name,omitempty" jsonschema:"requested name, an adjective+noun like GreenCastle; kept when free and valid, otherwise the answer says which name you got"`
	Program           string  `json:"program,omitempty" jsonschema:"agent program, e.g. claude-code, codex-cli, gemini-cli"`
	Model             string  `json:"model,omitempty" jsonschema:"model, e.g. opus-4.5, gpt-5"`
	TaskDescription   *string `json:"task_description,omitempty" jsonschema:"what this agent is working on"`
	AttachmentsPolicy string  `json:"attachments_policy,omitempty" jsonschema:"auto, inline, attach (or file) or deny"`
	amCompat
}

type amCreateIdentityIn struct {
	amProjectArg
	NameHint          string  `json:"name_hint,omitempty" jsonschema:"preferred name; a taken or invalid one is replaced and the answer says so"`
	Program           string  `json:"program,omitempty" jsonschema:"agent program"`
	Model             string  `json:"model,omitempty" jsonschema:"model"`
	TaskDescription   *string `json:"task_description,omitempty" jsonschema:"what this agent is working on"`
	AttachmentsPolicy string  `json:"attachments_policy,omitempty" jsonschema:"auto, inline, attach (or file) or deny"`
	amCompat
}

// amProjectArg is the project_key of the tools that describe it in the
// plain words (those with more to say, as register_agent, spell their own).
type amProjectArg struct {
	ProjectKey string `json:"project_key" jsonschema:"project's absolute path or slug"`
}

type amAgentRefIn struct {
	amProjectArg
	AgentName string `json:"agent_name" jsonschema:"registered agent name, e.g. GreenCastle"`
	amCompat
}

type amWhoisIn struct {
	amAgentRefIn
	IncludeRecentCommits *bool `json:"include_recent_commits,omitempty" jsonschema:"accepted for compatibility; mailgate keeps no git archive"`
	CommitLimit          int   `json:"commit_limit,omitempty" jsonschema:"accepted for compatibility"`
}

type amSendIn struct {
	amProjectArg
	SenderName           string    `json:"sender_name" jsonschema:"your registered agent name"`
	To                   amStrList `json:"to" jsonschema:"recipient agent names; Name@project for another project" maxItems:"1000"`
	Subject              string    `json:"subject" jsonschema:"subject line (cut at 200 characters)"`
	BodyMD               string    `json:"body_md" jsonschema:"Markdown body" maxLength:"1048576"`
	CC                   amStrList `json:"cc,omitempty" jsonschema:"carbon-copy recipients" maxItems:"1000"`
	BCC                  amStrList `json:"bcc,omitempty" jsonschema:"blind carbon-copy recipients" maxItems:"1000"`
	ThreadID             string    `json:"thread_id,omitempty" jsonschema:"thread to file the message in, e.g. TKT-123"`
	Importance           string    `json:"importance,omitempty" jsonschema:"low, normal (default), high or urgent"`
	AckRequired          bool      `json:"ack_required,omitempty" jsonschema:"ask recipients to acknowledge_message"`
	AttachmentPaths      []string  `json:"attachment_paths,omitempty" jsonschema:"files to attach, relative to the project directory (or absolute inside it): at most 4, each at most 1 MiB; stored as they are (images are not converted)" maxItems:"4"`
	ConvertImages        *bool     `json:"convert_images,omitempty" jsonschema:"accepted for compatibility; attachments are never converted"`
	Topic                string    `json:"topic,omitempty" jsonschema:"accepted for compatibility"`
	Broadcast            bool      `json:"broadcast,omitempty" jsonschema:"not supported: name the recipients"`
	AutoContactIfBlocked *bool     `json:"auto_contact_if_blocked,omitempty" jsonschema:"accepted for compatibility: mail to a recipient who has not approved you is always held (not dropped) and a contact request is sent"`
	SenderToken          string    `json:"sender_token,omitempty" jsonschema:"the sender's registration_token: needed only when the server binds senders to sessions and this session did not register the sender"`
	amCompat
}

type amReplyIn struct {
	amProjectArg
	MessageID     amInt     `json:"message_id" jsonschema:"id of the message to answer"`
	SenderName    string    `json:"sender_name" jsonschema:"your registered agent name"`
	BodyMD        string    `json:"body_md" jsonschema:"Markdown body" maxLength:"1048576"`
	To            amStrList `json:"to,omitempty" jsonschema:"recipients (default: the original sender)" maxItems:"1000"`
	CC            amStrList `json:"cc,omitempty" jsonschema:"carbon-copy recipients" maxItems:"1000"`
	BCC           amStrList `json:"bcc,omitempty" jsonschema:"blind carbon-copy recipients" maxItems:"1000"`
	SubjectPrefix string    `json:"subject_prefix,omitempty" jsonschema:"prefix added once to the subject (default Re:)"`
	SenderToken   string    `json:"sender_token,omitempty" jsonschema:"the sender's registration_token: needed only when the server binds senders to sessions and this session did not register the sender"`
	amCompat
}

type amFetchIn struct {
	amAgentRefIn
	Limit         int    `json:"limit,omitempty" jsonschema:"at most this many messages, newest first (default 20, max 1000)"`
	UnreadOnly    bool   `json:"unread_only,omitempty" jsonschema:"only messages not yet marked read"`
	UrgentOnly    bool   `json:"urgent_only,omitempty" jsonschema:"only messages with ack_required (those waiting for your acknowledge_message)"`
	ThreadID      string `json:"thread_id,omitempty" jsonschema:"only this thread"`
	SinceTS       string `json:"since_ts,omitempty" jsonschema:"only messages created after this ISO-8601 time"`
	IncludeBodies bool   `json:"include_bodies,omitempty" jsonschema:"include body_md"`
	Topic         string `json:"topic,omitempty" jsonschema:"accepted for compatibility"`
}

type amMessageRefIn struct {
	amAgentRefIn
	MessageID amInt  `json:"message_id" jsonschema:"message id from fetch_inbox"`
	AckBody   string `json:"ack_body,omitempty" jsonschema:"accepted for compatibility (reply_message carries text)"`
}

type amSearchIn struct {
	amProjectArg
	Query     string `json:"query" jsonschema:"words, \"phrases\", prefix*, AND / OR / NOT, (groups), subject:word; odd input is repaired, never an error"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many results (default 20)"`
	AgentName string `json:"agent_name,omitempty" jsonschema:"only messages this agent sent or received"`
	amCompat
}

type amSummarizeIn struct {
	amProjectArg
	ThreadID string `json:"thread_id" jsonschema:"thread id, or several separated by commas for a digest"`
	amSummaryOptions
	AgentName string `json:"agent_name,omitempty" jsonschema:"accepted for compatibility"`
	amCompat
}

// amSummaryOptions are the options of summarize_thread and
// summarize_thread_product.
type amSummaryOptions struct {
	IncludeExamples bool   `json:"include_examples,omitempty" jsonschema:"include up to three example messages"`
	LLMMode         *bool  `json:"llm_mode,omitempty" jsonschema:"accepted for compatibility; summaries are always heuristic and reproducible"`
	LLMModel        string `json:"llm_model,omitempty" jsonschema:"accepted for compatibility"`
	PerThreadLimit  int    `json:"per_thread_limit,omitempty" jsonschema:"accepted for compatibility"`
}

type amReserveIn struct {
	amAgentRefIn
	Paths      amStrList `json:"paths" jsonschema:"paths or gitignore-style globs relative to the project root, e.g. src/** or tests/*.py; at most 1000, each at most 1024 bytes" maxItems:"1000" maxLength:"1024"`
	TTLSeconds int       `json:"ttl_seconds,omitempty" jsonschema:"lease length in seconds (default 600, minimum 60)"`
	Exclusive  *bool     `json:"exclusive,omitempty" jsonschema:"true: an exclusive lock; false (default): shared, and shared reservations never conflict with each other"`
	Reason     string    `json:"reason,omitempty" jsonschema:"why, e.g. a ticket id"`
}

// The integration contract's defaults of file_reservation_paths (the
// reference server's are exclusive and 3600 s; the contract, which clients
// are written against, wins). macro_file_reservation_cycle reserves with
// the same defaults; macro_start_session keeps the reference's (exclusive,
// 3600 s), which the contract does not state.
const (
	contractReserveTTLSeconds = 600
	contractReserveExclusive  = false
)

// params applies the contract's defaults.
func (in amReserveIn) params() agentmail.ReserveParams {
	ttl, excl := in.TTLSeconds, in.Exclusive
	if ttl == 0 {
		ttl = contractReserveTTLSeconds
	}
	if excl == nil {
		excl = ptr(contractReserveExclusive)
	}
	return agentmail.ReserveParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, Paths: in.Paths, TTLSeconds: ttl, Exclusive: excl, Reason: in.Reason}
}

type amReleaseIn struct {
	amAgentRefIn
	Paths              amStrList `json:"paths,omitempty" jsonschema:"release these patterns (default: all of yours)"`
	FileReservationIDs []amInt   `json:"file_reservation_ids,omitempty" jsonschema:"release these ids"`
}

// selection is the reservations the call names (release_file_reservations,
// renew_file_reservations).
func (in amReleaseIn) selection() agentmail.SelectParams {
	return agentmail.SelectParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, Paths: in.Paths, IDs: amInts(in.FileReservationIDs)}
}

type amRenewIn struct {
	amReleaseIn
	ExtendSeconds int `json:"extend_seconds,omitempty" jsonschema:"extend by this many seconds (default 1800, minimum 60)"`
	NewTTLSeconds int `json:"new_ttl_seconds,omitempty" jsonschema:"instead: expire this many seconds from now"`
}

type amForceReleaseIn struct {
	amAgentRefIn
	FileReservationID amInt  `json:"file_reservation_id" jsonschema:"id of the stale reservation"`
	NotifyPrevious    *bool  `json:"notify_previous,omitempty" jsonschema:"tell the holder (default true)"`
	Note              string `json:"note,omitempty" jsonschema:"note for the holder"`
}

type amRequestContactIn struct {
	ProjectKey string `json:"project_key" jsonschema:"your project's absolute path or slug"`
	FromAgent  string `json:"from_agent" jsonschema:"your agent name"`
	ToAgent    string `json:"to_agent" jsonschema:"the agent to contact"`
	ToProject  string `json:"to_project,omitempty" jsonschema:"its project, when not yours"`
	Reason     string `json:"reason,omitempty" jsonschema:"why you want to write"`
	TTLSeconds int    `json:"ttl_seconds,omitempty" jsonschema:"how long the request stays open (default 7 days)"`
	amUnusedRegistration
	amCompat
}

// amUnusedRegistration are the reference's arguments for registering an
// agent on the way, which request_contact and macro_contact_handshake
// accept and ignore (the requester must be registered already).
type amUnusedRegistration struct {
	RegisterIfMissing *bool   `json:"register_if_missing,omitempty" jsonschema:"accepted for compatibility"`
	Program           string  `json:"program,omitempty" jsonschema:"accepted for compatibility"`
	Model             string  `json:"model,omitempty" jsonschema:"accepted for compatibility"`
	TaskDescription   *string `json:"task_description,omitempty" jsonschema:"accepted for compatibility"`
}

type amRespondContactIn struct {
	ProjectKey  string `json:"project_key" jsonschema:"your project's absolute path or slug"`
	ToAgent     string `json:"to_agent" jsonschema:"your agent name (the one asked)"`
	FromAgent   string `json:"from_agent" jsonschema:"the agent that asked"`
	Accept      bool   `json:"accept" jsonschema:"true approves (and delivers mail held from them), false declines"`
	TTLSeconds  int    `json:"ttl_seconds,omitempty" jsonschema:"approval lifetime (default 30 days)"`
	FromProject string `json:"from_project,omitempty" jsonschema:"the asker's project, when not yours"`
	amCompat
}

type amPolicyIn struct {
	amAgentRefIn
	Policy string `json:"policy" jsonschema:"open, auto, contacts_only or block_all"`
}

type amStartSessionIn struct {
	HumanKey                  string    `json:"human_key,omitempty" jsonschema:"project's absolute path (or use project_key)"`
	ProjectKey                string    `json:"project_key,omitempty" jsonschema:"alias of human_key"`
	Program                   string    `json:"program,omitempty" jsonschema:"agent program"`
	Model                     string    `json:"model,omitempty" jsonschema:"model"`
	TaskDescription           *string   `json:"task_description,omitempty" jsonschema:"what this agent is working on"`
	AgentName                 string    `json:"agent_name,omitempty" jsonschema:"requested agent name"`
	FileReservationPaths      amStrList `json:"file_reservation_paths,omitempty" jsonschema:"paths to reserve"`
	ReservePaths              amStrList `json:"reserve_paths,omitempty" jsonschema:"alias of file_reservation_paths"`
	FileReservationReason     string    `json:"file_reservation_reason,omitempty" jsonschema:"reason for the reservations"`
	FileReservationTTLSeconds int       `json:"file_reservation_ttl_seconds,omitempty" jsonschema:"reservation TTL (default 3600)"`
	InboxLimit                int       `json:"inbox_limit,omitempty" jsonschema:"inbox messages to return (default 10)"`
	amCompat
}

type amPrepareThreadIn struct {
	amProjectArg
	ThreadID           string  `json:"thread_id" jsonschema:"thread to prepare for"`
	AgentName          string  `json:"agent_name,omitempty" jsonschema:"your agent name"`
	Program            string  `json:"program,omitempty" jsonschema:"given with model: (re)register the agent"`
	Model              string  `json:"model,omitempty" jsonschema:"model"`
	TaskDescription    *string `json:"task_description,omitempty" jsonschema:"task, when (re)registering"`
	RegisterIfMissing  *bool   `json:"register_if_missing,omitempty" jsonschema:"register the agent if it does not exist (default true)"`
	IncludeExamples    *bool   `json:"include_examples,omitempty" jsonschema:"include example messages (default true)"`
	InboxLimit         int     `json:"inbox_limit,omitempty" jsonschema:"inbox messages to return (default 10)"`
	IncludeInboxBodies bool    `json:"include_inbox_bodies,omitempty" jsonschema:"include bodies in the inbox"`
	LLMMode            *bool   `json:"llm_mode,omitempty" jsonschema:"accepted for compatibility"`
	LLMModel           string  `json:"llm_model,omitempty" jsonschema:"accepted for compatibility"`
	amCompat
}

type amCycleIn struct {
	amReserveIn
	AutoRelease bool `json:"auto_release,omitempty" jsonschema:"release the granted reservations again at once"`
}

type amHandshakeIn struct {
	ProjectKey     string `json:"project_key" jsonschema:"requester's project (absolute path or slug)"`
	Requester      string `json:"requester,omitempty" jsonschema:"requesting agent (or agent_name)"`
	AgentName      string `json:"agent_name,omitempty" jsonschema:"alias of requester"`
	Target         string `json:"target,omitempty" jsonschema:"agent to contact (or to_agent)"`
	ToAgent        string `json:"to_agent,omitempty" jsonschema:"alias of target"`
	ToProject      string `json:"to_project,omitempty" jsonschema:"target's project, when not the requester's"`
	Reason         string `json:"reason,omitempty" jsonschema:"why"`
	TTLSeconds     int    `json:"ttl_seconds,omitempty" jsonschema:"request/approval lifetime in seconds"`
	AutoAccept     bool   `json:"auto_accept,omitempty" jsonschema:"approve on the target's behalf"`
	WelcomeSubject string `json:"welcome_subject,omitempty" jsonschema:"send a first message with this subject"`
	WelcomeBody    string `json:"welcome_body,omitempty" jsonschema:"and this body"`
	ThreadID       string `json:"thread_id,omitempty" jsonschema:"thread of the welcome message"`
	amUnusedRegistration
	amCompat
}
