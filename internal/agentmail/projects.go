package agentmail

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mailgate/mailgate/internal/editdist"
)

var nonSlug = lazyRegexp(`[^a-z0-9]+`)

// Slugify derives a project's slug from its absolute path:
// "/data/projects/brenner_bot" → "data-projects-brenner-bot".
func Slugify(humanKey string) string {
	s := strings.Trim(nonSlug().ReplaceAllString(strings.ToLower(humanKey), "-"), "-")
	if s == "" {
		return "root"
	}
	return s
}

// projectUID is the reference's stable project uid (first 20 hex digits of
// SHA-1 of the human key).
func projectUID(humanKey string) string {
	sum := sha1.Sum([]byte(humanKey))
	return hex.EncodeToString(sum[:])[:20]
}

var windowsAbs = lazyRegexp(`^[A-Za-z]:[\\/]`)

// isAbsKey reports whether the project key k is an absolute path: a Unix
// one, or a Windows one (C:\ or C:/).
func isAbsKey(k string) bool { return strings.HasPrefix(k, "/") || windowsAbs().MatchString(k) }

// givenKey is a project key as the tools take it: trimmed, and URL-decoded
// when it is encoded (%2Fdata%2Fprojects%2Fapp).
func givenKey(key string) string {
	k := strings.TrimSpace(key)
	if strings.Contains(k, "%") {
		if u, err := url.PathUnescape(k); err == nil {
			k = u
		}
	}
	return k
}

// cleanHumanKey checks that key is an absolute directory path and returns it
// cleaned (no trailing slash, no . or ..).
func cleanHumanKey(key string) (string, error) {
	k := strings.TrimSpace(key)
	if windowsAbs().MatchString(k) {
		return strings.TrimRight(strings.ReplaceAll(k, `\`, "/"), "/"), nil
	}
	if !strings.HasPrefix(k, "/") {
		return "", invalid("Invalid project_key: human_key must be an absolute directory path (got %q). "+
			"Pass the absolute path of the working directory, e.g. /data/projects/app, not a relative path or a slug.", key)
	}
	return path.Clean(k), nil
}

// EnsureProject creates the project for an absolute directory path, or
// returns the existing one. Its slug is stable: derived from the path once,
// and suffixed with a hash only if another path already took it.
func (s *Service) EnsureProject(ctx context.Context, humanKey string) (EnsureProjectResult, error) {
	if err := checkProjectKey(strings.TrimSpace(humanKey)); err != nil {
		return EnsureProjectResult{}, err
	}
	key, err := cleanHumanKey(humanKey)
	if err != nil {
		return EnsureProjectResult{}, err
	}
	if problem := ProjectKeyProblem(key, s.protected); problem != "" {
		return EnsureProjectResult{}, projectKeyError(key, problem)
	}
	var p Project
	err = s.st.Write(ctx, func(tx Tx) error {
		p, err = tx.ProjectByHumanKey(ctx, key)
		if err == nil || !errors.Is(err, ErrNotFound) {
			return err
		}
		p = Project{Slug: Slugify(key), HumanKey: key, CreatedAt: s.clock()}
		if _, err := tx.ProjectBySlug(ctx, p.Slug); err == nil {
			p.Slug += "-" + projectUID(key)[:8]
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		return tx.InsertProject(ctx, &p)
	})
	if err != nil {
		return EnsureProjectResult{}, fmt.Errorf("ensuring project: %w", err)
	}
	return EnsureProjectResult{ProjectView: projectView(p), IdentityModeUsed: "dir", ProjectUID: projectUID(p.HumanKey)}, nil
}

// project resolves a project key: an absolute path (plain or URL-encoded)
// or a slug.
func (s *Service) project(ctx context.Context, tx Tx, key string) (Project, error) {
	k := givenKey(key)
	if p, ok := s.projects.get(k); ok {
		return p, nil
	}
	if err := checkProjectKey(k); err != nil {
		return Project{}, err
	}
	var p Project
	var err error
	switch {
	case k == "":
		return Project{}, invalid("project_key is required: pass the project's absolute path (as given to ensure_project) or its slug")
	case isAbsKey(k):
		clean, _ := cleanHumanKey(k)
		p, err = tx.ProjectByHumanKey(ctx, clean)
	case isRelativePath(k):
		// A slug never holds a slash nor starts with a dot: this is a path
		// relative to a working directory the server does not share, which
		// the contract names an invalid key (not a project that is missing).
		return Project{}, invalid("Invalid project_key: %q is a relative path. "+
			"Pass the absolute path of the project's working directory (as given to ensure_project, e.g. /data/projects/app) or its slug.", key)
	default:
		p, err = tx.ProjectBySlug(ctx, k)
		if errors.Is(err, ErrNotFound) && Slugify(k) != k {
			p, err = tx.ProjectBySlug(ctx, Slugify(k))
		}
	}
	if errors.Is(err, ErrNotFound) {
		return Project{}, newError("NOT_FOUND", ErrProjectNotFound,
			"Project not found: %q. Call ensure_project with the project's absolute path first, then use that path or the returned slug as project_key.", key)
	}
	if err == nil {
		s.projects.put(k, p)
	}
	return p, err
}

// isRelativePath tells a relative path ("./backend", "../app", "src/app",
// "~/app") from a slug, which is one word of [a-z0-9-].
func isRelativePath(k string) bool {
	return strings.HasPrefix(k, ".") || strings.HasPrefix(k, "~") || strings.ContainsAny(k, `/\`)
}

// projectByID is ProjectByID through the cache.
func (s *Service) projectByID(ctx context.Context, tx Tx, id int64) (Project, error) {
	key := "#" + strconv.FormatInt(id, 10)
	if p, ok := s.projects.get(key); ok {
		return p, nil
	}
	p, err := tx.ProjectByID(ctx, id)
	if err == nil {
		s.projects.put(key, p)
	}
	return p, err
}

// projectCache remembers resolved projects. Projects are never changed or
// deleted once created, so a cached entry cannot go stale, even with other
// processes writing the store; it saves two queries per send.
type projectCache struct {
	mu sync.RWMutex
	m  map[string]Project
}

func (c *projectCache) get(key string) (Project, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.m[key]
	return p, ok
}

func (c *projectCache) put(key string, p Project) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[string]Project{}
	}
	c.m[key] = p
}

// agent resolves an agent name within p; a miss suggests close names.
func (s *Service) agent(ctx context.Context, tx Tx, p Project, name string) (Agent, error) {
	n := strings.TrimSpace(name)
	if n == "" {
		return Agent{}, invalid("agent name is required")
	}
	a, err := tx.AgentByName(ctx, p.ID, n)
	if errors.Is(err, ErrNotFound) {
		return Agent{}, s.agentNotFound(ctx, tx, p, n)
	}
	return a, err
}

// projectAgent resolves a project key and then an agent name within that
// project: the start of every call made on an agent's behalf.
func (s *Service) projectAgent(ctx context.Context, tx Tx, projectKey, agentName string) (Project, Agent, error) {
	return s.projectAnd(ctx, tx, projectKey, agentName, s.agent)
}

// projectAnd resolves a project key, then an agent name in it with agent
// (Service.agent, or knownAgent through the caches).
func (s *Service) projectAnd(ctx context.Context, tx Tx, projectKey, agentName string,
	agent func(context.Context, Tx, Project, string) (Agent, error)) (Project, Agent, error) {
	p, err := s.project(ctx, tx, projectKey)
	if err != nil {
		return Project{}, Agent{}, err
	}
	a, err := agent(ctx, tx, p, agentName)
	if err != nil {
		return Project{}, Agent{}, err
	}
	return p, a, nil
}

func (s *Service) agentNotFound(ctx context.Context, tx Tx, p Project, name string) error {
	msg := fmt.Sprintf("Agent '%s' not found in project '%s'.", name, p.Slug)
	if agents, err := tx.Agents(ctx, p.ID); err == nil {
		if near := closeNames(name, agents); len(near) > 0 {
			msg += " Did you mean " + strings.Join(near, " or ") + "?"
		}
	}
	msg += " Register it with register_agent first (agent names are identities like GreenCastle, not program names)."
	return newError("NOT_FOUND", ErrAgentNotFound, "%s", msg)
}

// closeNames returns up to three quoted names within a small edit distance
// of name, or sharing a prefix with it.
func closeNames(name string, agents []Agent) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	ln := strings.ToLower(name)
	for _, a := range agents {
		la := strings.ToLower(a.Name)
		d := editdist.Levenshtein(ln, la)
		if d <= 3 || (len(ln) >= 3 && strings.HasPrefix(la, ln)) {
			cs = append(cs, cand{a.Name, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].name < cs[j].name })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, "'"+cs[i].name+"'")
	}
	return out
}

// ListProjects returns every project.
func (s *Service) ListProjects(ctx context.Context) ([]ProjectView, error) {
	var ps []Project
	err := s.st.Read(ctx, func(tx Tx) (err error) {
		ps, err = tx.Projects(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing projects: %w", err)
	}
	return viewsOf(ps, projectView), nil
}

// Health reports whether the store answers.
func (s *Service) Health(ctx context.Context) (HealthResult, error) {
	var n int
	err := s.st.Read(ctx, func(tx Tx) error {
		ps, err := tx.Projects(ctx)
		n = len(ps)
		return err
	})
	if err != nil {
		return HealthResult{}, fmt.Errorf("checking health: %w", err)
	}
	return HealthResult{Status: "ready", Service: "mailgate agent-mail", Projects: n, Time: formatTS(s.clock())}, nil
}
