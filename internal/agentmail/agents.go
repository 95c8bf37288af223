package agentmail

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RegisterParams are register_agent's and create_agent_identity's inputs.
type RegisterParams struct {
	ProjectKey string
	// Name is the requested name ("" = generate one).
	Name    string
	Program string // "" keeps the existing value (or "unknown" for a new agent)
	Model   string // likewise
	// TaskDescription nil keeps the existing description; non-nil replaces it.
	TaskDescription   *string
	AttachmentsPolicy string // auto | inline | attach (file) | deny; "" keeps / defaults to auto
	// New always creates a new identity (create_agent_identity): a taken
	// name is then replaced, and the answer says so.
	New bool
	// RegistrationToken is the token an earlier registration answered: it
	// lets another session (a restarted agent) resume a live identity.
	RegistrationToken string
}

// attachmentsPolicies are the values attachments_policy takes: the
// contract's (inline, attach, deny), auto (the reference's default) and file,
// an earlier name of attach that stores may hold.
var attachmentsPolicies = map[string]bool{"auto": true, "inline": true, "attach": true, "file": true, "deny": true}

// RegisterAgent registers an agent in a project, or updates the profile of
// the agent that already has the requested name (re-registering is how an
// agent resumes its identity). A free, valid requested name is always kept;
// when the agent gets another name, RequestedName and NameNotice say so.
// A name another live session holds is never handed over silently: strict
// mode refuses, coerce gives a new name (see identity.go).
func (s *Service) RegisterAgent(ctx context.Context, p RegisterParams) (AgentProfile, error) {
	if p.AttachmentsPolicy != "" && !attachmentsPolicies[p.AttachmentsPolicy] {
		return AgentProfile{}, invalid("attachments_policy %q is not valid: use auto, inline, attach (or its earlier name file) or deny", p.AttachmentsPolicy)
	}
	requested := strings.TrimSpace(p.Name)
	var out AgentProfile
	err := s.st.Write(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, p.ProjectKey)
		if err != nil {
			return err
		}
		now := s.clock()
		name, notice, err := s.chooseName(ctx, tx, proj, requested, p.New)
		if err != nil {
			return err
		}
		a, err := tx.AgentByName(ctx, proj.ID, name)
		if err == nil {
			v, verr := s.mayResume(ctx, tx, a, strings.TrimSpace(p.RegistrationToken), now)
			if verr != nil {
				return verr
			}
			if !v.ok {
				held := heldText(a.Name, a, v, now)
				if s.mode == NameStrict {
					return newError("NAME_TAKEN", ErrNameHeld, "%s. If you are %s resuming in a new session, call register_agent again with the "+
						"registration_token your first registration answered; otherwise choose another name, or omit name to get one.", held, a.Name)
				}
				if name, err = s.generateName(ctx, tx, proj); err != nil {
					return err
				}
				notice = fmt.Sprintf("%s, so you are registered as '%s'. Use '%s' as your name in every call. "+
					"(If you are %s resuming in a new session, register again with name '%s' and the registration_token your first registration answered.)",
					held, name, name, a.Name, a.Name)
				err = ErrNotFound // a new identity: created below
			}
		}
		switch {
		case err == nil: // the same identity again: refresh its profile
			if p.Program != "" {
				a.Program = p.Program
			}
			if p.Model != "" {
				a.Model = p.Model
			}
			if p.TaskDescription != nil {
				a.TaskDescription = *p.TaskDescription
			}
			if p.AttachmentsPolicy != "" {
				a.AttachmentsPolicy = p.AttachmentsPolicy
			}
			a.LastActiveAt = now
			if err := tx.UpdateAgent(ctx, a); err != nil {
				return err
			}
			if requested != "" && a.Name != requested && notice == "" {
				notice = fmt.Sprintf("Agent names are case-insensitive: '%s' is the existing agent '%s'; use '%s' from now on.", requested, a.Name, a.Name)
			}
		case errors.Is(err, ErrNotFound):
			a = Agent{ProjectID: proj.ID, Name: name, Program: cmp.Or(p.Program, "unknown"), Model: cmp.Or(p.Model, "unknown"),
				InceptionAt: now, LastActiveAt: now, AttachmentsPolicy: cmp.Or(p.AttachmentsPolicy, "auto"), ContactPolicy: PolicyAuto}
			if p.TaskDescription != nil {
				a.TaskDescription = *p.TaskDescription
			}
			if err := tx.InsertAgent(ctx, &a); err != nil {
				return err
			}
		default:
			return err
		}
		token, err := s.bind(ctx, tx, a, strings.TrimSpace(p.RegistrationToken), now)
		if err != nil {
			return err
		}
		out = AgentProfile{AgentCard: agentCard(a), RegistrationToken: token}
		if notice != "" {
			out.RequestedName, out.NameNotice = requested, notice
		}
		return nil
	})
	if err != nil {
		return AgentProfile{}, fmt.Errorf("registering agent: %w", err)
	}
	return out, nil
}

// generateName returns a generated name free in project p.
func (s *Service) generateName(ctx context.Context, tx Tx, p Project) (string, error) {
	agents, err := tx.Agents(ctx, p.ID)
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool, len(agents))
	for _, a := range agents {
		taken[strings.ToLower(a.Name)] = true
	}
	return GenerateName(taken, s.rand), nil
}

// chooseName applies the name mode to the requested name.
func (s *Service) chooseName(ctx context.Context, tx Tx, p Project, requested string, forceNew bool) (name, notice string, err error) {
	generate := func() (string, error) { return s.generateName(ctx, tx, p) }
	switch {
	case s.mode == NameAlwaysAuto:
		name, err = generate()
		if err == nil && requested != "" {
			notice = fmt.Sprintf("This server assigns every agent a generated name (always_auto mode), so '%s' was not used: you are '%s'. Use '%s' as your name in every call.", requested, name, name)
		}
		return name, notice, err
	case requested == "":
		name, err = generate()
		return name, "", err
	}
	// An existing agent resumes its identity under its name, whatever rule
	// was in force when it got it.
	if !forceNew {
		if a, err := tx.AgentByName(ctx, p.ID, requested); err == nil {
			return a.Name, "", nil
		} else if !errors.Is(err, ErrNotFound) {
			return "", "", err
		}
	}
	// strict holds new names to the overview's adjective+noun rule; coerce
	// keeps any usable name (ManagerMoose, backend-1) and replaces the
	// others with a generated adjective+noun name.
	problem, caseNotice := NameProblem(requested), ""
	if s.mode == NameStrict {
		var canonical string
		if canonical, problem = RequestedNameProblem(requested); problem == "" && canonical != requested {
			caseNotice = fmt.Sprintf("Agent names are CamelCase: '%s' is registered as '%s'; use '%s' from now on.", requested, canonical, canonical)
			requested = canonical
		}
	}
	if problem != "" {
		if s.mode == NameStrict {
			return "", "", newError("INVALID_AGENT_NAME", ErrInvalidName,
				"Invalid agent name '%s': %s. Choose a name like GreenCastle, or omit name to get one.", requested, problem)
		}
		name, err = generate()
		if err == nil {
			notice = fmt.Sprintf("'%s' cannot be an agent name (%s), so you are registered as '%s'. Use '%s' as your name in every call.", requested, problem, name, name)
		}
		return name, notice, err
	}
	if forceNew {
		if _, err := tx.AgentByName(ctx, p.ID, requested); err == nil {
			name, err = generate()
			if err == nil {
				notice = fmt.Sprintf("'%s' is already taken in this project, so the new identity is '%s'. Use '%s' as your name in every call.", requested, name, name)
			}
			return name, notice, err
		} else if !errors.Is(err, ErrNotFound) {
			return "", "", err
		}
	}
	return requested, caseNotice, nil
}

// Whois returns an agent's profile.
func (s *Service) Whois(ctx context.Context, projectKey, name string) (WhoisResult, error) {
	var a Agent
	err := s.st.Read(ctx, func(tx Tx) error {
		p, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		a, err = s.agent(ctx, tx, p, name)
		return err
	})
	if err != nil {
		return WhoisResult{}, fmt.Errorf("looking up agent: %w", err)
	}
	return WhoisResult{AgentCard: agentCard(a), RecentCommits: []any{}}, nil
}

// touchNeeded reports whether a reading agent's activity should be recorded:
// at most once a minute, so that polling stays read-only almost always.
func touchNeeded(a Agent, now time.Time) bool { return now.Sub(a.LastActiveAt) >= time.Minute }

// Agents returns the agents directory of a project with unread counts.
func (s *Service) Agents(ctx context.Context, projectKey string) (AgentsResource, error) {
	var out AgentsResource
	err := s.readAgents(ctx, projectKey, func(tx Tx, p Project, agents []Agent) error {
		unread, err := tx.UnreadCounts(ctx, p.ID)
		if err != nil {
			return err
		}
		out.Project.Slug, out.Project.HumanKey = p.Slug, p.HumanKey
		out.Agents = viewsOf(agents, func(a Agent) AgentDirEntry {
			return AgentDirEntry{AgentView: agentView(a), UnreadCount: unread[a.ID]}
		})
		return nil
	})
	if err != nil {
		return AgentsResource{}, fmt.Errorf("listing agents: %w", err)
	}
	return out, nil
}

// ProjectDetail returns a project with its agents.
func (s *Service) ProjectDetail(ctx context.Context, projectKey string) (ProjectResource, error) {
	var out ProjectResource
	err := s.readAgents(ctx, projectKey, func(_ Tx, p Project, agents []Agent) error {
		out.ProjectView = projectView(p)
		out.Agents = viewsOf(agents, agentView)
		return nil
	})
	if err != nil {
		return ProjectResource{}, fmt.Errorf("reading project: %w", err)
	}
	return out, nil
}

// readAgents resolves a project and lists its agents in one read
// transaction, then hands both to fn in that transaction.
func (s *Service) readAgents(ctx context.Context, projectKey string, fn func(tx Tx, p Project, agents []Agent) error) error {
	return s.st.Read(ctx, func(tx Tx) error {
		p, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		agents, err := tx.Agents(ctx, p.ID)
		if err != nil {
			return err
		}
		return fn(tx, p, agents)
	})
}
