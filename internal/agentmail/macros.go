package agentmail

import (
	"context"
	"fmt"
	"strings"
)

// The macros bundle the calls an agent makes at the start of a session or a
// task, so a client needs one round trip instead of four. Each step is its
// own short transaction, exactly as if the agent had made the calls.

// StartSessionParams are macro_start_session's inputs.
type StartSessionParams struct {
	HumanKey        string
	AgentName       string
	Program         string
	Model           string
	TaskDescription *string
	ReservePaths    []string
	ReserveReason   string
	ReserveTTL      int
	InboxLimit      int // 0 = 10
	// RegistrationToken resumes AgentName from a new session (RegisterParams).
	RegistrationToken string
}

// StartSessionResult is macro_start_session's answer.
type StartSessionResult struct {
	Project          ProjectView   `json:"project"`
	Agent            AgentProfile  `json:"agent"`
	FileReservations ReserveResult `json:"file_reservations"`
	Inbox            []FetchEntry  `json:"inbox"`
}

// StartSession ensures the project, registers the agent, optionally reserves
// paths, and returns the latest inbox.
func (s *Service) StartSession(ctx context.Context, p StartSessionParams) (StartSessionResult, error) {
	proj, err := s.EnsureProject(ctx, p.HumanKey)
	if err != nil {
		return StartSessionResult{}, err
	}
	out := StartSessionResult{Project: proj.ProjectView, FileReservations: ReserveResult{Granted: []GrantView{}, Conflicts: []ConflictView{}}}
	td := p.TaskDescription
	if td == nil {
		td = new(string) // the reference starts a session with an empty description
	}
	if out.Agent, err = s.RegisterAgent(ctx, RegisterParams{ProjectKey: proj.HumanKey, Name: p.AgentName, Program: p.Program, Model: p.Model, TaskDescription: td,
		RegistrationToken: p.RegistrationToken}); err != nil {
		return StartSessionResult{}, err
	}
	if len(p.ReservePaths) > 0 {
		reason := p.ReserveReason
		if reason == "" {
			reason = "macro-session"
		}
		if out.FileReservations, err = s.Reserve(ctx, ReserveParams{ProjectKey: proj.HumanKey, Agent: out.Agent.Name, Paths: p.ReservePaths, TTLSeconds: p.ReserveTTL, Reason: reason}); err != nil {
			return StartSessionResult{}, err
		}
	}
	if out.Inbox, err = s.FetchInbox(ctx, InboxParams{ProjectKey: proj.HumanKey, Agent: out.Agent.Name, Limit: orInt(p.InboxLimit, 10)}); err != nil {
		return StartSessionResult{}, err
	}
	return out, nil
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// PrepareThreadParams are macro_prepare_thread's inputs.
type PrepareThreadParams struct {
	ProjectKey         string
	ThreadID           string
	AgentName          string
	Program            string
	Model              string
	TaskDescription    *string
	RegisterIfMissing  bool
	IncludeExamples    bool
	InboxLimit         int
	IncludeInboxBodies bool
	RegistrationToken  string // resumes AgentName from a new session (RegisterParams)
}

// PreparedThread is the thread part of macro_prepare_thread's answer.
type PreparedThread struct {
	ThreadSummaryResult
	TotalMessages int `json:"total_messages"`
}

// PrepareThreadResult is macro_prepare_thread's answer.
type PrepareThreadResult struct {
	Project ProjectView    `json:"project"`
	Agent   AgentProfile   `json:"agent"`
	Thread  PreparedThread `json:"thread"`
	Inbox   []FetchEntry   `json:"inbox"`
}

// PrepareThread aligns an agent with a thread: (re)registers it when program
// or model are given (or it is missing), summarises the thread and returns
// its inbox.
func (s *Service) PrepareThread(ctx context.Context, p PrepareThreadParams) (PrepareThreadResult, error) {
	var out PrepareThreadResult
	var err error
	if out.Project, err = s.projectView(ctx, p.ProjectKey); err != nil {
		return out, err
	}
	who, werr := s.Whois(ctx, p.ProjectKey, p.AgentName)
	switch {
	case p.Program != "" || p.Model != "" || p.AgentName == "" || werr != nil && p.RegisterIfMissing:
		td := p.TaskDescription
		if td == nil {
			td = new(string) // as the reference: re-registration states the task afresh
		}
		out.Agent, err = s.RegisterAgent(ctx, RegisterParams{ProjectKey: p.ProjectKey, Name: p.AgentName, Program: p.Program, Model: p.Model, TaskDescription: td,
			RegistrationToken: p.RegistrationToken})
		if err != nil {
			return out, err
		}
	case werr != nil:
		return out, werr
	default:
		out.Agent = AgentProfile{AgentCard: who.AgentCard}
	}
	sum, err := s.SummarizeThread(ctx, p.ProjectKey, strings.TrimSpace(strings.Split(p.ThreadID, ",")[0]), p.IncludeExamples)
	if err != nil {
		return out, err
	}
	if one, ok := sum.(ThreadSummaryResult); ok {
		out.Thread = PreparedThread{ThreadSummaryResult: one, TotalMessages: one.Summary.TotalMessages}
	}
	out.Inbox, err = s.FetchInbox(ctx, InboxParams{ProjectKey: p.ProjectKey, Agent: out.Agent.Name, Limit: orInt(p.InboxLimit, 10), IncludeBodies: p.IncludeInboxBodies})
	return out, err
}

func (s *Service) projectView(ctx context.Context, key string) (ProjectView, error) {
	p, err := s.readProject(ctx, key)
	if err != nil {
		return ProjectView{}, fmt.Errorf("resolving project: %w", err)
	}
	return projectView(p), nil
}

// CycleResult is macro_file_reservation_cycle's answer.
type CycleResult struct {
	FileReservations ReserveResult  `json:"file_reservations"`
	Released         *ReleaseResult `json:"released"`
}

// ReservationCycle reserves paths and, with autoRelease, releases the
// granted reservations again (a "claim, check conflicts, let go" probe).
func (s *Service) ReservationCycle(ctx context.Context, p ReserveParams, autoRelease bool) (CycleResult, error) {
	if p.Reason == "" {
		p.Reason = "macro-file_reservation"
	}
	res, err := s.Reserve(ctx, p)
	if err != nil {
		return CycleResult{}, err
	}
	out := CycleResult{FileReservations: res}
	if autoRelease {
		ids := make([]int64, 0, len(res.Granted))
		for _, g := range res.Granted {
			ids = append(ids, g.ID)
		}
		rel, err := s.Release(ctx, SelectParams{ProjectKey: p.ProjectKey, Agent: p.Agent, IDs: ids})
		if err != nil {
			return CycleResult{}, err
		}
		out.Released = &rel
	}
	return out, nil
}

// HandshakeParams are macro_contact_handshake's inputs.
type HandshakeParams struct {
	ContactParams
	AutoAccept     bool
	WelcomeSubject string
	WelcomeBody    string
	ThreadID       string
}

// HandshakeResult is macro_contact_handshake's answer.
type HandshakeResult struct {
	Request        ContactRequestResult   `json:"request"`
	Response       *ContactResponseResult `json:"response"`
	WelcomeMessage *SendResult            `json:"welcome_message"`
}

// ContactHandshake requests contact, optionally approves it on the target's
// behalf, and optionally sends a welcome message.
func (s *Service) ContactHandshake(ctx context.Context, p HandshakeParams) (HandshakeResult, error) {
	var out HandshakeResult
	var err error
	if out.Request, err = s.RequestContact(ctx, p.ContactParams); err != nil {
		return out, err
	}
	if p.AutoAccept {
		targetKey := p.ProjectKey
		if p.ToProject != "" {
			targetKey = p.ToProject
		}
		resp, err := s.RespondContact(ctx, ContactParams{ProjectKey: targetKey, To: p.To, From: p.From, FromProj: p.ProjectKey, Accept: true, TTLSeconds: p.TTLSeconds})
		if err != nil {
			return out, err
		}
		out.Response = &resp
	}
	if p.WelcomeSubject != "" && p.WelcomeBody != "" {
		to := p.To
		if p.ToProject != "" {
			to += "@" + p.ToProject
		}
		sent, err := s.Send(ctx, SendParams{ProjectKey: p.ProjectKey, Sender: p.From, To: []string{to}, Subject: p.WelcomeSubject, BodyMD: p.WelcomeBody, ThreadID: p.ThreadID})
		if err != nil {
			return out, err
		}
		out.WelcomeMessage = &sent
	}
	return out, nil
}
