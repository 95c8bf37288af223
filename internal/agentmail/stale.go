package agentmail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A reservation is stale when its holder has been inactive for half an hour
// and nothing about it moved for a quarter of an hour: no mail to or from
// the holder, no file it covers modified. Only stale reservations of other
// agents may be force-released (the reference's rule).
const (
	staleAgentAfter    = 30 * time.Minute
	staleActivityAfter = 15 * time.Minute
	// maxScan bounds the directory walk that looks for recent edits, so a
	// huge checkout cannot stall a call.
	maxScan = 20000
)

// ReservationView is one reservation of resource://file_reservations, with
// the staleness evidence.
type ReservationView struct {
	ID                       int64    `json:"id"`
	Agent                    string   `json:"agent"`
	PathPattern              string   `json:"path_pattern"`
	Exclusive                bool     `json:"exclusive"`
	Reason                   string   `json:"reason"`
	CreatedTS                *string  `json:"created_ts"`
	ExpiresTS                *string  `json:"expires_ts"`
	ReleasedTS               *string  `json:"released_ts"`
	Stale                    bool     `json:"stale"`
	StaleReasons             []string `json:"stale_reasons"`
	LastAgentActivityTS      *string  `json:"last_agent_activity_ts"`
	LastMailActivityTS       *string  `json:"last_mail_activity_ts"`
	LastFilesystemActivityTS *string  `json:"last_filesystem_activity_ts"`
	LastGitActivityTS        *string  `json:"last_git_activity_ts"`
}

// ProjectTreeOK reports whether root is a tree whose file times the
// staleness check may read. Any agent can name any absolute directory as a
// project, and resource://file_reservations would then report when files
// matching its patterns in that directory last changed: /etc, another
// user's home. So the scan is bounded to what is plausibly the project's
// own tree: a real directory (not a symbolic link to elsewhere) holding
// .git at its top (a repository or worktree), owned by the user running
// mailgate (see ownedByMe). The walk itself never follows symbolic links
// and stays inside root. A project folder that is not a repository gets
// no filesystem evidence ("workspace_unavailable"), so its reservations are
// judged on agent and mail activity alone.
func ProjectTreeOK(root string) bool {
	fi, err := os.Lstat(root)
	if err != nil || !fi.IsDir() || !ownedByMe(fi) || filepath.Clean(root) == string(filepath.Separator) {
		return false
	}
	_, err = os.Lstat(filepath.Join(root, ".git"))
	return err == nil
}

// evidence is what staleness is judged on.
type evidence struct {
	agentAt, mailAt, fsAt time.Time
	workspace             bool
}

func (e evidence) judge(now time.Time) (bool, []string) {
	var reasons []string
	agentRecent := now.Sub(e.agentAt) < staleAgentAfter
	mailRecent := !e.mailAt.IsZero() && now.Sub(e.mailAt) < staleActivityAfter
	fsRecent := !e.fsAt.IsZero() && now.Sub(e.fsAt) < staleActivityAfter
	reasons = append(reasons, pick(agentRecent, "agent_recently_active", "agent_inactive"))
	reasons = append(reasons, pick(mailRecent, "mail_activity_recent", "no_recent_mail_activity"))
	switch {
	case !e.workspace:
		reasons = append(reasons, "workspace_unavailable")
	default:
		reasons = append(reasons, pick(fsRecent, "filesystem_activity_recent", "no_recent_filesystem_activity"))
	}
	return !agentRecent && !mailRecent && !fsRecent, reasons
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

func (s *Service) reservationView(r Reservation, e evidence, now time.Time) ReservationView {
	stale, reasons := e.judge(now)
	return ReservationView{ID: r.ID, Agent: r.AgentName, PathPattern: r.PathPattern, Exclusive: r.Exclusive, Reason: r.Reason,
		CreatedTS: ts(r.CreatedAt), ExpiresTS: ts(r.ExpiresAt), ReleasedTS: ts(r.ReleasedAt), Stale: stale, StaleReasons: reasons,
		LastAgentActivityTS: ts(e.agentAt), LastMailActivityTS: ts(e.mailAt), LastFilesystemActivityTS: ts(e.fsAt)}
}

// gather collects the database side of the evidence for reservations.
func (s *Service) gather(ctx context.Context, tx Tx, rs []Reservation) (map[int64]evidence, error) {
	byAgent := map[int64]evidence{}
	for _, r := range rs {
		if _, ok := byAgent[r.AgentID]; ok {
			continue
		}
		a, err := tx.AgentByID(ctx, r.AgentID)
		if err != nil {
			return nil, err
		}
		mail, err := tx.LastMailActivity(ctx, r.AgentID)
		if err != nil {
			return nil, err
		}
		byAgent[r.AgentID] = evidence{agentAt: a.LastActiveAt, mailAt: mail}
	}
	return byAgent, nil
}

// fileEvidence adds the filesystem side (outside any transaction: it walks
// the project's directory).
func (s *Service) fileEvidence(root string, rs []Reservation, ev map[int64]evidence) []evidence {
	out := make([]evidence, len(rs))
	ok := s.dirOK(root)
	var latest []time.Time
	if ok {
		pats := make([]*Pattern, len(rs))
		for i, r := range rs {
			pats[i] = CompilePattern(r.PathPattern)
		}
		latest = s.fsScan(root, pats)
	}
	for i, r := range rs {
		e := ev[r.AgentID]
		e.workspace = ok
		if ok {
			e.fsAt = latest[i]
		}
		out[i] = e
	}
	return out
}

// latestModTime walks root once and returns, per pattern, the newest
// modification time of a file it covers (zero if none).
func latestModTime(root string, pats []*Pattern) []time.Time {
	out := make([]time.Time, len(pats))
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxScan {
			return filepath.SkipAll
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (name == ".git" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		var mt time.Time
		for i, pt := range pats {
			if !pt.Match(rel) {
				continue
			}
			if mt.IsZero() {
				info, err := d.Info()
				if err != nil {
					return nil
				}
				mt = info.ModTime().UTC()
			}
			if mt.After(out[i]) {
				out[i] = mt
			}
		}
		return nil
	})
	return out
}

// ListReservations returns a project's reservations (active ones, or all)
// with their staleness.
func (s *Service) ListReservations(ctx context.Context, projectKey string, activeOnly bool) ([]ReservationView, error) {
	var proj Project
	var rs []Reservation
	var ev map[int64]evidence
	now := s.clock()
	err := s.st.Read(ctx, func(tx Tx) (err error) {
		if proj, err = s.project(ctx, tx, projectKey); err != nil {
			return err
		}
		q := ReservationQuery{ProjectID: proj.ID, IncludeAll: !activeOnly}
		if activeOnly {
			q.ActiveAt = now
		}
		if rs, err = tx.Reservations(ctx, q); err != nil {
			return err
		}
		ev, err = s.gather(ctx, tx, rs)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing file reservations: %w", err)
	}
	evs := s.fileEvidence(proj.HumanKey, rs, ev)
	out := make([]ReservationView, 0, len(rs))
	for i, r := range rs {
		out = append(out, s.reservationView(r, evs[i], now))
	}
	return out, nil
}

// ForceParams are force_release_file_reservation's inputs.
type ForceParams struct {
	ProjectKey string
	Agent      string // who asks
	ID         int64
	Notify     *bool // nil = true: tell the previous holder
	Note       string
}

// ForceResult is force_release_file_reservation's answer.
type ForceResult struct {
	Released    int             `json:"released"`
	ReleasedAt  *string         `json:"released_at"`
	Reservation ReservationView `json:"reservation"`
	Notified    bool            `json:"notified"`
}

// ForceRelease releases another agent's reservation once it is stale, and
// tells the holder. Active reservations are refused with the evidence.
func (s *Service) ForceRelease(ctx context.Context, p ForceParams) (ForceResult, error) {
	var proj Project
	var r Reservation
	var ev map[int64]evidence
	err := s.st.Read(ctx, func(tx Tx) (err error) {
		if proj, _, err = s.projectAgent(ctx, tx, p.ProjectKey, p.Agent); err != nil {
			return err
		}
		r, err = tx.ReservationByID(ctx, p.ID)
		if errors.Is(err, ErrNotFound) || err == nil && r.ProjectID != proj.ID {
			return newError("NOT_FOUND", ErrReservationNotFound, "File reservation %d not found in project '%s'.", p.ID, proj.Slug)
		} else if err != nil {
			return err
		}
		ev, err = s.gather(ctx, tx, []Reservation{r})
		return err
	})
	if err != nil {
		return ForceResult{}, fmt.Errorf("force-releasing file reservation: %w", err)
	}
	e := s.fileEvidence(proj.HumanKey, []Reservation{r}, ev)[0]
	var out ForceResult
	err = s.st.Write(ctx, func(tx Tx) error {
		now := s.clock()
		asker, err := s.agent(ctx, tx, proj, p.Agent)
		if err != nil {
			return err
		}
		cur, err := tx.ReservationByID(ctx, r.ID)
		if err != nil {
			return err
		}
		holder, err := tx.AgentByID(ctx, cur.AgentID)
		if err != nil {
			return err
		}
		e.agentAt = holder.LastActiveAt // the holder may have come back meanwhile
		out = ForceResult{ReleasedAt: ts(cur.ReleasedAt), Reservation: s.reservationView(cur, e, now)}
		if !cur.ActiveAt(now) {
			return nil // released or expired already: nothing to do
		}
		if stale, reasons := e.judge(now); holder.ID != asker.ID && !stale {
			return newError("RESERVATION_ACTIVE", ErrReservationActive,
				"File reservation %d (%s) held by %s is still active (%v). Force release only works on stale reservations "+
					"(holder inactive for 30 minutes and no mail or file activity for 15 minutes); message %s instead.",
				cur.ID, cur.PathPattern, holder.Name, reasons, holder.Name)
		}
		if err := tx.ReleaseReservation(ctx, cur.ID, now); err != nil {
			return err
		}
		cur.ReleasedAt = now
		out = ForceResult{Released: 1, ReleasedAt: ts(now), Reservation: s.reservationView(cur, e, now)}
		if holder.ID != asker.ID && (p.Notify == nil || *p.Notify) {
			body := fmt.Sprintf("%s force-released your stale file reservation %d on `%s` (you had been inactive).", asker.Name, cur.ID, cur.PathPattern)
			if p.Note != "" {
				body += "\n\nNote: " + p.Note
			}
			body += "\n\nReserve it again with file_reservation_paths if you are still working on it."
			if _, _, err := s.sendTx(ctx, tx, outgoing{proj: proj, sender: asker, to: []string{holder.Name},
				subject: "File reservation released: " + cur.PathPattern, body: body, importance: ImportanceNormal, notice: true}); err != nil {
				return err
			}
			out.Notified = true
		}
		return tx.TouchAgent(ctx, asker.ID, now)
	})
	if err != nil {
		return ForceResult{}, fmt.Errorf("force-releasing file reservation: %w", err)
	}
	return out, nil
}
