package agentmail

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The commit guard's rule (the overview's "hard block": exclusive=true plus
// a pre-commit hook). Reservations are advisory for the tools; the guard
// makes an exclusive one binding at the moment it matters, when a commit
// would change a file another agent holds. The hook (internal/guard) asks
// git which paths the commit touches and this rule which of them are held.

// CommitConflict is one path a commit touches that another agent holds
// exclusively.
type CommitConflict struct {
	Path      string    // the committed path, relative to the project root
	Holder    string    // the agent holding it
	Pattern   string    // the reservation's pattern that covers Path
	ExpiresAt time.Time // when the reservation lapses if not renewed or released
}

// CommitConflicts returns, for the paths a commit touches (relative to the
// project root), those covered by an active exclusive reservation held by
// an agent other than committer. committer "" (a commit by someone who did
// not say which agent they are: a human, or an agent without AGENT_NAME) is
// nobody's holder, so every exclusive reservation counts. Shared
// reservations never block a commit: they are announcements.
func (s *Service) CommitConflicts(ctx context.Context, projectKey, committer string, paths []string) ([]CommitConflict, error) {
	now := s.clock()
	var rs []Reservation
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, projectKey)
		if err != nil {
			return err
		}
		rs, err = tx.Reservations(ctx, ReservationQuery{ProjectID: proj.ID, ActiveAt: now})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the reservations of %s: %w", projectKey, err)
	}
	var out []CommitConflict
	for _, p := range paths {
		for _, r := range rs {
			if !r.Exclusive || !r.ActiveAt(now) || (committer != "" && strings.EqualFold(r.AgentName, committer)) {
				continue
			}
			if CompilePattern(r.PathPattern).Match(p) {
				out = append(out, CommitConflict{Path: p, Holder: r.AgentName, Pattern: r.PathPattern, ExpiresAt: r.ExpiresAt})
				break // one holder is enough to refuse; the first by id
			}
		}
	}
	return out, nil
}

// ProjectFolderProblem says why the project folder dir may not be written
// to on an agent's behalf (the commit guard's hook goes there): the rule of
// ensure_project (ProjectKeyProblem: never /, the user's home, mailgate's
// own folders, nor a folder holding or inside one) and a project's own tree
// (ProjectTreeOK: a real directory of the user's with .git at its top).
// A store made before the rule may hold such a project; "" when dir is fine.
func (s *Service) ProjectFolderProblem(dir string) string {
	if p := ProjectKeyProblem(dir, s.protected); p != "" {
		return p
	}
	if !ProjectTreeOK(dir) {
		return "it is not a project's own tree (a directory of yours with .git at its top)"
	}
	return ""
}
