package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// The agent-mail tool set: the mcp_agent_mail contract (tool names, argument
// names, answer shapes) over agentmail.Service. The tools are listed in the
// inventory (inventory.go); their handlers, here, only translate arguments;
// the rules live in the agentmail package.

type amTools struct {
	svc *agentmail.Service
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

// The handlers, in the inventory's order. Each translates its arguments to
// the Service's parameters and returns the Service's answer.

func (t *amTools) health(ctx context.Context, _ amHealthIn) (agentmail.HealthResult, error) {
	return t.svc.Health(ctx)
}

func (t *amTools) ensureProject(ctx context.Context, in amEnsureProjectIn) (agentmail.EnsureProjectResult, error) {
	return t.svc.EnsureProject(ctx, in.HumanKey)
}

func (t *amTools) registerAgent(ctx context.Context, in amRegisterIn) (agentmail.AgentProfile, error) {
	return t.svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: in.ProjectKey, Name: in.Name, Program: in.Program,
		Model: in.Model, TaskDescription: in.TaskDescription, AttachmentsPolicy: in.AttachmentsPolicy, RegistrationToken: in.RegistrationToken})
}

func (t *amTools) createIdentity(ctx context.Context, in amCreateIdentityIn) (agentmail.AgentProfile, error) {
	return t.svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: in.ProjectKey, Name: in.NameHint, Program: in.Program,
		Model: in.Model, TaskDescription: in.TaskDescription, AttachmentsPolicy: in.AttachmentsPolicy, New: true})
}

func (t *amTools) whois(ctx context.Context, in amWhoisIn) (agentmail.WhoisResult, error) {
	return t.svc.Whois(ctx, in.ProjectKey, in.AgentName)
}

func (t *amTools) send(ctx context.Context, in amSendIn) (agentmail.SendResult, error) {
	if in.Broadcast {
		return agentmail.SendResult{}, &agentmail.Error{Code: "INVALID_ARGUMENT", Err: agentmail.ErrInvalidArgument,
			Message: "broadcast is not supported: list the recipients in to (see resource://agents/<project> for names)"}
	}
	return t.svc.Send(ctx, agentmail.SendParams{ProjectKey: in.ProjectKey, Sender: in.SenderName, To: in.To, CC: in.CC, BCC: in.BCC,
		Subject: in.Subject, BodyMD: in.BodyMD, ThreadID: in.ThreadID, Importance: in.Importance, AckRequired: in.AckRequired,
		AttachmentPaths: in.AttachmentPaths, SenderToken: in.SenderToken})
}

func (t *amTools) reply(ctx context.Context, in amReplyIn) (agentmail.ReplyResult, error) {
	return t.svc.Reply(ctx, agentmail.ReplyParams{ProjectKey: in.ProjectKey, MessageID: int64(in.MessageID), Sender: in.SenderName,
		BodyMD: in.BodyMD, To: in.To, CC: in.CC, BCC: in.BCC, SubjectPrefix: in.SubjectPrefix, SenderToken: in.SenderToken})
}

func (t *amTools) fetchInbox(ctx context.Context, in amFetchIn) (any, error) {
	return t.svc.FetchInbox(ctx, agentmail.InboxParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, Limit: in.Limit, UnreadOnly: in.UnreadOnly,
		UrgentOnly: in.UrgentOnly, ThreadID: in.ThreadID, SinceTS: in.SinceTS, IncludeBodies: in.IncludeBodies})
}

func (t *amTools) markRead(ctx context.Context, in amMessageRefIn) (agentmail.ReadResult, error) {
	return t.svc.MarkRead(ctx, in.ProjectKey, in.AgentName, int64(in.MessageID))
}

func (t *amTools) acknowledge(ctx context.Context, in amMessageRefIn) (agentmail.AckResult, error) {
	return t.svc.Acknowledge(ctx, in.ProjectKey, in.AgentName, int64(in.MessageID))
}

func (t *amTools) search(ctx context.Context, in amSearchIn) (agentmail.SearchResult, error) {
	return t.svc.Search(ctx, agentmail.SearchParams{ProjectKey: in.ProjectKey, Query: in.Query, Limit: in.Limit, Agent: in.AgentName})
}

func (t *amTools) summarize(ctx context.Context, in amSummarizeIn) (any, error) {
	return t.svc.SummarizeThread(ctx, in.ProjectKey, in.ThreadID, in.IncludeExamples)
}

func (t *amTools) requestContact(ctx context.Context, in amRequestContactIn) (agentmail.ContactRequestResult, error) {
	return t.svc.RequestContact(ctx, agentmail.ContactParams{ProjectKey: in.ProjectKey, From: in.FromAgent, To: in.ToAgent,
		ToProject: in.ToProject, Reason: in.Reason, TTLSeconds: in.TTLSeconds})
}

func (t *amTools) respondContact(ctx context.Context, in amRespondContactIn) (agentmail.ContactResponseResult, error) {
	return t.svc.RespondContact(ctx, agentmail.ContactParams{ProjectKey: in.ProjectKey, To: in.ToAgent, From: in.FromAgent,
		FromProj: in.FromProject, Accept: in.Accept, TTLSeconds: in.TTLSeconds})
}

func (t *amTools) listContacts(ctx context.Context, in amAgentRefIn) (any, error) {
	return t.svc.ListContacts(ctx, in.ProjectKey, in.AgentName)
}

func (t *amTools) setContactPolicy(ctx context.Context, in amPolicyIn) (agentmail.PolicyResult, error) {
	return t.svc.SetContactPolicy(ctx, in.ProjectKey, in.AgentName, in.Policy)
}

func (t *amTools) reserve(ctx context.Context, in amReserveIn) (agentmail.ReserveResult, error) {
	return t.svc.Reserve(ctx, in.params())
}

func (t *amTools) release(ctx context.Context, in amReleaseIn) (agentmail.ReleaseResult, error) {
	return t.svc.Release(ctx, in.selection())
}

func (t *amTools) renew(ctx context.Context, in amRenewIn) (agentmail.RenewResult, error) {
	return t.svc.Renew(ctx, agentmail.RenewParams{SelectParams: in.selection(), ExtendSeconds: in.ExtendSeconds, NewTTLSeconds: in.NewTTLSeconds})
}

func (t *amTools) forceRelease(ctx context.Context, in amForceReleaseIn) (agentmail.ForceResult, error) {
	return t.svc.ForceRelease(ctx, agentmail.ForceParams{ProjectKey: in.ProjectKey, Agent: in.AgentName, ID: int64(in.FileReservationID),
		Notify: in.NotifyPrevious, Note: in.Note})
}

func (t *amTools) startSession(ctx context.Context, in amStartSessionIn) (agentmail.StartSessionResult, error) {
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
}

func (t *amTools) prepareThread(ctx context.Context, in amPrepareThreadIn) (agentmail.PrepareThreadResult, error) {
	return t.svc.PrepareThread(ctx, agentmail.PrepareThreadParams{ProjectKey: in.ProjectKey, ThreadID: in.ThreadID, AgentName: in.AgentName,
		Program: in.Program, Model: in.Model, TaskDescription: in.TaskDescription, RegisterIfMissing: in.RegisterIfMissing == nil || *in.RegisterIfMissing,
		IncludeExamples: in.IncludeExamples == nil || *in.IncludeExamples, InboxLimit: in.InboxLimit, IncludeInboxBodies: in.IncludeInboxBodies,
		RegistrationToken: in.RegistrationToken})
}

func (t *amTools) reservationCycle(ctx context.Context, in amCycleIn) (agentmail.CycleResult, error) {
	return t.svc.ReservationCycle(ctx, in.params(), in.AutoRelease)
}

func (t *amTools) contactHandshake(ctx context.Context, in amHandshakeIn) (agentmail.HandshakeResult, error) {
	from, to := amFirstOf(in.Requester, in.AgentName), amFirstOf(in.Target, in.ToAgent)
	if from == "" || to == "" {
		return agentmail.HandshakeResult{}, &agentmail.Error{Code: "MISSING_FIELD", Err: agentmail.ErrInvalidArgument,
			Message: "macro_contact_handshake needs requester (or agent_name) and target (or to_agent)"}
	}
	return t.svc.ContactHandshake(ctx, agentmail.HandshakeParams{ContactParams: agentmail.ContactParams{ProjectKey: in.ProjectKey,
		From: from, To: to, ToProject: in.ToProject, Reason: in.Reason, TTLSeconds: in.TTLSeconds},
		AutoAccept: in.AutoAccept, WelcomeSubject: in.WelcomeSubject, WelcomeBody: in.WelcomeBody, ThreadID: in.ThreadID})
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
