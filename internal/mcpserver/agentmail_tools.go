package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// The agent-mail tool set: the mcp_agent_mail contract (tool names, argument
// names, answer shapes) over agentmail.Service. Handlers only translate
// arguments and errors; the rules live in the agentmail package.

// AgentMailMinimalTools is the reference's "minimal" profile, for clients
// that want few tools: enough to join, talk and acknowledge.
var AgentMailMinimalTools = []string{"health_check", "ensure_project", "register_agent", "send_message", "fetch_inbox", "acknowledge_message"}

type amTools struct {
	svc  *agentmail.Service
	log  *slog.Logger
	only map[string]bool // the tools of a smaller profile; nil registers all
	args argStyle        // how argument errors are worded (agentmail or channels)
}

// agentMailProfile returns the tools a TOOLS_FILTER_PROFILE value lists
// (nil: all of them).
func agentMailProfile(profile string) (map[string]bool, error) {
	switch profile {
	case "", "full":
		return nil, nil
	case "minimal":
		only := map[string]bool{}
		for _, name := range AgentMailMinimalTools {
			only[name] = true
		}
		return only, nil
	}
	return nil, fmt.Errorf("building server: agentmail tool profile %q is not one of full, minimal", profile)
}

// fail turns a Service error into the tool error the agent reads: refusals
// verbatim (they say what to do), anything else as a generic retryable
// failure with the details in the server log.
func (t *amTools) fail(tool string, err error) error {
	var e *agentmail.Error
	if errors.As(err, &e) {
		return errors.New(e.Message)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s was cancelled before it finished; nothing is lost, call it again", tool)
	}
	t.log.Error("agent-mail tool failed", "tool", tool, "err", err)
	return fmt.Errorf("internal error in %s: the store could not complete the call (details are in the server log); it is safe to retry", tool)
}

// amAnnotate declares a tool's risk explicitly: every agent-mail tool is local
// (openWorldHint false), and destructiveHint is never left to default.
func amAnnotate(title string, readOnly, idempotent, destructive bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, IdempotentHint: idempotent,
		DestructiveHint: ptr(destructive), OpenWorldHint: ptr(false)}
}

// amAddTyped registers a tool whose answer is one JSON object (Out). The
// input and output schemas are advertised; arguments are validated against
// the input schema as the SDK's typed tools do, but the answer is not
// re-validated against the output schema: it is this package's own typed
// struct, and validating it cost a quarter of a send_message call.
func amAddTyped[In, Out any](s *mcp.Server, t *amTools, spec *mcp.Tool, call func(context.Context, In) (Out, error)) {
	if t.only != nil && !t.only[spec.Name] {
		return
	}
	key := "out/" + spec.Name
	if raw, ok := toolSchema(key); ok {
		spec.OutputSchema = raw
	} else {
		out, err := jsonschema.For[Out](&jsonschema.ForOptions{})
		if err != nil {
			panic(fmt.Sprintf("output schema of %s: %v", spec.Name, err))
		}
		spec.OutputSchema = explicitAny(out)
		schemaBuilt(key, spec.OutputSchema)
	}
	amAddJSON(s, t, spec, func(ctx context.Context, in In) (any, error) { return call(ctx, in) })
}

// amAddJSON registers a tool whose answer is a JSON value. The text content
// is the answer itself (as the reference sends it); structuredContent is the
// answer when it is an object and {"result": …} otherwise, because protocol
// 2025-11-25 clients expect an object there.
func amAddJSON[In any](s *mcp.Server, t *amTools, spec *mcp.Tool, call func(context.Context, In) (any, error)) {
	if t.only != nil && !t.only[spec.Name] {
		return
	}
	args := newArgDecoder[In](spec, t.args)
	s.AddTool(spec, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in, err := args.decode(req.Params.Arguments)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		v, err := call(withSession(ctx, req.Session), in)
		if err != nil {
			return errorResult(t.fail(spec.Name, err).Error()), nil
		}
		return amJSONResult(v)
	})
}

func amJSONResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding answer: %w", err)
	}
	var structured any = json.RawMessage(b)
	if len(b) == 0 || b[0] != '{' {
		structured = map[string]json.RawMessage{"result": b}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}, nil
}

// addAgentMailTools registers the agent-mail tools (those of only, when it
// is not nil) and every resource.
func addAgentMailTools(s *mcp.Server, svc *agentmail.Service, only map[string]bool) {
	t := &amTools{svc: svc, log: svc.Logger(), only: only}
	t.addIdentityTools(s)
	t.addMessageTools(s)
	t.addContactTools(s)
	t.addReservationTools(s)
	t.addMacroTools(s)
	addAgentMailResources(s, svc)
}

func (t *amTools) addIdentityTools(s *mcp.Server) {
	amAddTyped(s, t, &mcp.Tool{Name: "health_check", Description: "Check that the agent-mail store is reachable. Answers {status: \"ready\", …} when it is.",
		Annotations: amAnnotate("Health check", true, true, false)},
		func(ctx context.Context, _ amHealthIn) (agentmail.HealthResult, error) { return t.svc.Health(ctx) })

	amAddTyped(s, t, &mcp.Tool{Name: "ensure_project", Description: "Create or look up the project for a working directory. " +
		"human_key must be the directory's ABSOLUTE path; the answer's slug is stable and can be used as project_key later. Call this first.",
		Annotations: amAnnotate("Ensure project", false, true, false)},
		func(ctx context.Context, in amEnsureProjectIn) (agentmail.EnsureProjectResult, error) {
			return t.svc.EnsureProject(ctx, in.HumanKey)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "register_agent", Description: "Register your agent identity in a project (or resume it: registering an existing name " +
		"updates that agent's profile). Names are memorable adjective+noun pairs like GreenCastle; a free, valid requested name is always kept. " +
		"If you get a different name, requested_name and name_notice say so: use the returned name in every later call.",
		Annotations: amAnnotate("Register agent", false, true, false)},
		func(ctx context.Context, in amRegisterIn) (agentmail.AgentProfile, error) {
			return t.svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: in.ProjectKey, Name: in.Name, Program: in.Program,
				Model: in.Model, TaskDescription: in.TaskDescription, AttachmentsPolicy: in.AttachmentsPolicy, RegistrationToken: in.RegistrationToken})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "create_agent_identity", Description: "Always create a new agent identity in a project (unlike register_agent, " +
		"which resumes an existing name). A taken or invalid name_hint is replaced, and the answer says so.",
		Annotations: amAnnotate("Create agent identity", false, false, false)},
		func(ctx context.Context, in amCreateIdentityIn) (agentmail.AgentProfile, error) {
			return t.svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: in.ProjectKey, Name: in.NameHint, Program: in.Program,
				Model: in.Model, TaskDescription: in.TaskDescription, AttachmentsPolicy: in.AttachmentsPolicy, New: true})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "whois", Description: "Look up an agent's profile (program, model, task, last activity).",
		Annotations: amAnnotate("Who is", true, true, false)},
		func(ctx context.Context, in amWhoisIn) (agentmail.WhoisResult, error) {
			return t.svc.Whois(ctx, in.ProjectKey, in.AgentName)
		})
}

func (t *amTools) addMessageTools(s *mcp.Server) {
	amAddTyped(s, t, &mcp.Tool{Name: "send_message", Description: "Send a Markdown message to agents of the project (to/cc/bcc; Name@project for another project). " +
		"Optional thread_id, importance (low|normal|high|urgent), ack_required, and attachment_paths (files inside the project, at most 4 of 1 MiB each, " +
		"stored as they are; readers get them from resource://message/{id}). Mail to a recipient whose contact policy does not accept you yet " +
		"is HELD for them (never dropped) and listed under held; they get a contact request.",
		Annotations: amAnnotate("Send message", false, false, false)},
		func(ctx context.Context, in amSendIn) (agentmail.SendResult, error) {
			if in.Broadcast {
				return agentmail.SendResult{}, &agentmail.Error{Code: "INVALID_ARGUMENT", Err: agentmail.ErrInvalidArgument,
					Message: "broadcast is not supported: list the recipients in to (see resource://agents/<project> for names)"}
			}
			return t.svc.Send(ctx, agentmail.SendParams{ProjectKey: in.ProjectKey, Sender: in.SenderName, To: in.To, CC: in.CC, BCC: in.BCC,
				Subject: in.Subject, BodyMD: in.BodyMD, ThreadID: in.ThreadID, Importance: in.Importance, AckRequired: in.AckRequired,
				AttachmentPaths: in.AttachmentPaths, SenderToken: in.SenderToken})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "reply_message", Description: "Reply to a message: stays in its thread, adds \"Re:\" once, inherits importance " +
		"and ack_required, and goes to the original sender unless to/cc/bcc are given.",
		Annotations: amAnnotate("Reply to message", false, false, false)},
		func(ctx context.Context, in amReplyIn) (agentmail.ReplyResult, error) {
			return t.svc.Reply(ctx, agentmail.ReplyParams{ProjectKey: in.ProjectKey, MessageID: int64(in.MessageID), Sender: in.SenderName,
				BodyMD: in.BodyMD, To: in.To, CC: in.CC, BCC: in.BCC, SubjectPrefix: in.SubjectPrefix, SenderToken: in.SenderToken})
		})

	amAddJSON(s, t, &mcp.Tool{Name: "fetch_inbox", Description: "List your delivered messages, newest first (limit, unread_only, urgent_only, thread_id, since_ts, " +
		"include_bodies). Fetching never marks anything read: use mark_message_read / acknowledge_message.",
		Annotations: amAnnotate("Fetch inbox", true, true, false)},
		func(ctx context.Context, in amFetchIn) (any, error) {
			return t.svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, Limit: in.Limit, UnreadOnly: in.UnreadOnly,
				UrgentOnly: in.UrgentOnly, ThreadID: in.ThreadID, SinceTS: in.SinceTS, IncludeBodies: in.IncludeBodies})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "mark_message_read", Description: "Mark a message of your inbox as read (idempotent; the first time is kept).",
		Annotations: amAnnotate("Mark message read", false, true, false)},
		func(ctx context.Context, in amMessageRefIn) (agentmail.ReadResult, error) {
			return t.svc.MarkRead(ctx, in.ProjectKey, in.AgentName, int64(in.MessageID))
		})

	amAddTyped(s, t, &mcp.Tool{Name: "acknowledge_message", Description: "Acknowledge a message of your inbox (also marks it read; idempotent).",
		Annotations: amAnnotate("Acknowledge message", false, true, false)},
		func(ctx context.Context, in amMessageRefIn) (agentmail.AckResult, error) {
			return t.svc.Acknowledge(ctx, in.ProjectKey, in.AgentName, int64(in.MessageID))
		})

	amAddTyped(s, t, &mcp.Tool{Name: "search_messages", Description: "Full-text search over the project's messages, best match first. Supports words, " +
		"\"exact phrases\", prefix*, AND / OR / NOT, parentheses and subject:word; malformed queries are repaired (see diagnostics), never refused.",
		Annotations: amAnnotate("Search messages", true, true, false)},
		func(ctx context.Context, in amSearchIn) (agentmail.SearchResult, error) {
			return t.svc.Search(ctx, agentmail.SearchParams{ProjectKey: in.ProjectKey, Query: in.Query, Limit: in.Limit, Agent: in.AgentName})
		})

	amAddJSON(s, t, &mcp.Tool{Name: "summarize_thread", Description: "Summarize a thread without an LLM: participants, key points (bullets, headings), " +
		"action items (TODO/ACTION/NEXT/FIXME/BLOCKED lines and checkboxes), mentions and code references. Several ids separated by commas give a digest.",
		Annotations: amAnnotate("Summarize thread", true, true, false)},
		func(ctx context.Context, in amSummarizeIn) (any, error) {
			return t.svc.SummarizeThread(ctx, in.ProjectKey, in.ThreadID, in.IncludeExamples)
		})
}

func (t *amTools) addContactTools(s *mcp.Server) {
	amAddTyped(s, t, &mcp.Tool{Name: "request_contact", Description: "Ask another agent for permission to write to it (needed across projects and " +
		"for contacts_only recipients). Sends it an introduction that asks for an acknowledgement.",
		Annotations: amAnnotate("Request contact", false, false, false)},
		func(ctx context.Context, in amRequestContactIn) (agentmail.ContactRequestResult, error) {
			return t.svc.RequestContact(ctx, agentmail.ContactParams{ProjectKey: in.ProjectKey, From: in.FromAgent, To: in.ToAgent,
				ToProject: in.ToProject, Reason: in.Reason, TTLSeconds: in.TTLSeconds})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "respond_contact", Description: "Approve (accept=true) or decline a contact request made to you. Approval works " +
		"both ways and delivers the messages that were held for you; declining keeps them held, never deletes them.",
		Annotations: amAnnotate("Respond to contact", false, true, false)},
		func(ctx context.Context, in amRespondContactIn) (agentmail.ContactResponseResult, error) {
			return t.svc.RespondContact(ctx, agentmail.ContactParams{ProjectKey: in.ProjectKey, To: in.ToAgent, From: in.FromAgent,
				FromProj: in.FromProject, Accept: in.Accept, TTLSeconds: in.TTLSeconds})
		})

	amAddJSON(s, t, &mcp.Tool{Name: "list_contacts", Description: "List your contacts (to, status, expiry) and the requests waiting for you " +
		"(direction incoming, with the number of messages they hold).",
		Annotations: amAnnotate("List contacts", true, true, false)},
		func(ctx context.Context, in amAgentRefIn) (any, error) {
			return t.svc.ListContacts(ctx, in.ProjectKey, in.AgentName)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "set_contact_policy", Description: "Choose who may write to you: open (anyone), auto (default: your project, " +
		"approved contacts, shared threads), contacts_only, or block_all. Mail you do not accept is held, not dropped; loosening the policy delivers it.",
		Annotations: amAnnotate("Set contact policy", false, true, false)},
		func(ctx context.Context, in amPolicyIn) (agentmail.PolicyResult, error) {
			return t.svc.SetContactPolicy(ctx, in.ProjectKey, in.AgentName, in.Policy)
		})
}

func (t *amTools) addReservationTools(s *mcp.Server) {
	amAddTyped(s, t, &mcp.Tool{Name: "file_reservation_paths", Description: "Reserve files before editing them: paths or gitignore-style globs relative " +
		"to the project root (src/**, tests/*.py). Shared unless exclusive is true; ttl_seconds default 600. Always granted (advisory); overlaps with other " +
		"agents' reservations, in either direction, are listed under conflicts with code FILE_RESERVATION_CONFLICT.",
		Annotations: amAnnotate("Reserve files", false, false, false)},
		func(ctx context.Context, in amReserveIn) (agentmail.ReserveResult, error) {
			return t.svc.Reserve(ctx, in.params())
		})

	amAddTyped(s, t, &mcp.Tool{Name: "release_file_reservations", Description: "Release your reservations: those matching paths or file_reservation_ids, or all of them.",
		Annotations: amAnnotate("Release reservations", false, true, false)},
		func(ctx context.Context, in amReleaseIn) (agentmail.ReleaseResult, error) {
			return t.svc.Release(ctx, agentmail.SelectParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, Paths: in.Paths, IDs: amInts(in.FileReservationIDs)})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "renew_file_reservations", Description: "Extend your active reservations (all, or by paths / ids) by extend_seconds " +
		"(default 1800), or set new_ttl_seconds from now.",
		Annotations: amAnnotate("Renew reservations", false, false, false)},
		func(ctx context.Context, in amRenewIn) (agentmail.RenewResult, error) {
			return t.svc.Renew(ctx, agentmail.RenewParams{SelectParams: agentmail.SelectParams{ProjectKey: in.ProjectKey, Agent: in.AgentName,
				Paths: in.Paths, IDs: amInts(in.FileReservationIDs)}, ExtendSeconds: in.ExtendSeconds, NewTTLSeconds: in.NewTTLSeconds})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "force_release_file_reservation", Description: "Release another agent's reservation that has gone stale " +
		"(holder inactive 30 min, no mail or file activity for 15 min); active ones are refused with the evidence. The holder is notified.",
		Annotations: amAnnotate("Force-release reservation", false, true, true)},
		func(ctx context.Context, in amForceReleaseIn) (agentmail.ForceResult, error) {
			return t.svc.ForceRelease(ctx, agentmail.ForceParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, ID: int64(in.FileReservationID),
				Notify: in.NotifyPrevious, Note: in.Note})
		})
}

func (t *amTools) addMacroTools(s *mcp.Server) {
	amAddTyped(s, t, &mcp.Tool{Name: "macro_start_session", Description: "Start a session in one call: ensure_project + register_agent + optional " +
		"file reservations + the latest inbox.",
		Annotations: amAnnotate("Start session", false, false, false)},
		func(ctx context.Context, in amStartSessionIn) (agentmail.StartSessionResult, error) {
			key := in.HumanKey
			if key == "" {
				key = in.ProjectKey
			}
			paths := in.FileReservationPaths
			if len(paths) == 0 {
				paths = in.ReservePaths
			}
			return t.svc.StartSession(ctx, agentmail.StartSessionParams{HumanKey: key, AgentName: in.AgentName, Program: in.Program, Model: in.Model,
				TaskDescription: in.TaskDescription, ReservePaths: paths, ReserveReason: in.FileReservationReason,
				ReserveTTL: in.FileReservationTTLSeconds, InboxLimit: in.InboxLimit, RegistrationToken: in.RegistrationToken})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "macro_prepare_thread", Description: "Join a thread in one call: (re)register when program/model are given, " +
		"summarize the thread, and return your inbox.",
		Annotations: amAnnotate("Prepare thread", false, false, false)},
		func(ctx context.Context, in amPrepareThreadIn) (agentmail.PrepareThreadResult, error) {
			return t.svc.PrepareThread(ctx, agentmail.PrepareThreadParams{ProjectKey: in.ProjectKey, ThreadID: in.ThreadID, AgentName: in.AgentName,
				Program: in.Program, Model: in.Model, TaskDescription: in.TaskDescription, RegisterIfMissing: in.RegisterIfMissing == nil || *in.RegisterIfMissing,
				IncludeExamples: in.IncludeExamples == nil || *in.IncludeExamples, InboxLimit: in.InboxLimit, IncludeInboxBodies: in.IncludeInboxBodies,
				RegistrationToken: in.RegistrationToken})
		})

	amAddTyped(s, t, &mcp.Tool{Name: "macro_file_reservation_cycle", Description: "Reserve paths and report conflicts (defaults as file_reservation_paths: " +
		"shared, 600 s); with auto_release, release them again at once.",
		Annotations: amAnnotate("Reservation cycle", false, false, false)},
		func(ctx context.Context, in amCycleIn) (agentmail.CycleResult, error) {
			return t.svc.ReservationCycle(ctx, in.params(), in.AutoRelease)
		})

	amAddTyped(s, t, &mcp.Tool{Name: "macro_contact_handshake", Description: "Request contact, optionally approve it on the target's behalf (auto_accept), " +
		"and optionally send a welcome message.",
		Annotations: amAnnotate("Contact handshake", false, false, false)},
		func(ctx context.Context, in amHandshakeIn) (agentmail.HandshakeResult, error) {
			from, to := amFirstOf(in.Requester, in.AgentName), amFirstOf(in.Target, in.ToAgent)
			if from == "" || to == "" {
				return agentmail.HandshakeResult{}, &agentmail.Error{Code: "MISSING_FIELD", Err: agentmail.ErrInvalidArgument,
					Message: "macro_contact_handshake needs requester (or agent_name) and target (or to_agent)"}
			}
			return t.svc.ContactHandshake(ctx, agentmail.HandshakeParams{ContactParams: agentmail.ContactParams{ProjectKey: in.ProjectKey,
				From: from, To: to, ToProject: in.ToProject, Reason: in.Reason, TTLSeconds: in.TTLSeconds},
				AutoAccept: in.AutoAccept, WelcomeSubject: in.WelcomeSubject, WelcomeBody: in.WelcomeBody, ThreadID: in.ThreadID})
		})
}

func amFirstOf(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// explicitAny replaces the boolean schema `true` that jsonschema-go infers
// for `any` fields (e.g. ensure_project's discovery) with an equivalent
// object schema: the TypeScript SDK's tools/list validation refuses boolean
// subschemas, and with it every client built on that SDK.
func explicitAny(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil {
		return nil
	}
	if reflect.ValueOf(*s).IsZero() {
		return &jsonschema.Schema{Description: "any JSON value"}
	}
	for k, p := range s.Properties {
		s.Properties[k] = explicitAny(p)
	}
	s.Items = explicitAny(s.Items)
	if s.AdditionalProperties != nil {
		s.AdditionalProperties = explicitAny(s.AdditionalProperties)
	}
	for k, d := range s.Defs {
		s.Defs[k] = explicitAny(d)
	}
	return s
}
