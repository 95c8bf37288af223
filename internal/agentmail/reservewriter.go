package agentmail

import (
	"context"
	"time"
)

// ReservationWriter is a Store that writes one agent's grant, or release,
// in one statement outside any transaction: on PostgreSQL a round trip,
// where the transaction Reserve and Release otherwise run costs four
// (BEGIN, the agent's own reservations, the write, COMMIT). It does in that
// statement exactly what those transactions do: a grant extends the agent's
// own active reservations of the same pattern and exclusivity and inserts
// the others (taking the project's reservation lock with its insert, as
// ReservationTx.GrantReservations does); a release marks the agent's
// selected active reservations released. Both write the agent's heartbeat
// with them when asked. SQLite, where a transaction costs no round trip,
// does not implement it.
type ReservationWriter interface {
	GrantOwn(ctx context.Context, g OwnGrant) ([]Reservation, error)
	// ReleaseOwn releases the reservations q selects (q.AgentID's, active
	// at q.ActiveAt) at q.ActiveAt, and returns how many it released.
	ReleaseOwn(ctx context.Context, q ReservationQuery, touch bool) (int, error)
}

// OwnGrant is one agent's grant for ReservationWriter.GrantOwn: Paths are
// normalised and distinct, and the answer holds a reservation for each, in
// their order (ID, PathPattern, Exclusive, Reason and ExpiresAt set).
type OwnGrant struct {
	ProjectID, AgentID int64
	Paths              []string
	Exclusive          bool
	Reason             string
	At, Expires        time.Time
	// Touch writes the agent's heartbeat (At) with the grant.
	Touch bool
}

// normalizePaths is a grant's patterns, normalised and without repeats, in
// the order asked, and the requested forms among them that reserve the
// whole project.
func normalizePaths(raws []string, projectKey string) (paths, whole []string) {
	seen := map[string]bool{}
	for _, raw := range raws {
		path := NormalizePattern(raw, projectKey)
		if seen[path] {
			continue
		}
		seen[path] = true
		paths = append(paths, path)
		if path == "**" {
			whole = append(whole, raw)
		}
	}
	return paths, whole
}

// grantOwn is Reserve's write on a ReservationWriter: the agent resolved
// (through the cache: no statement once known) in a read, then one
// statement.
func (s *Service) grantOwn(ctx context.Context, rw ReservationWriter, p ReserveParams, exclusive bool, ttl time.Duration) (proj Project, a Agent, now time.Time, paths, whole []string, granted []GrantView, err error) {
	if err = s.readEach(ctx, func(tx Tx) error {
		var err error
		proj, a, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Agent)
		return err
	}); err != nil {
		return
	}
	now = s.clock()
	paths, whole = normalizePaths(p.Paths, proj.HumanKey)
	rs, err := rw.GrantOwn(ctx, OwnGrant{ProjectID: proj.ID, AgentID: a.ID, Paths: paths, Exclusive: exclusive, Reason: p.Reason,
		At: now, Expires: now.Add(ttl), Touch: now.Sub(a.LastActiveAt) >= writerTouchEvery})
	if err != nil {
		return
	}
	granted = make([]GrantView, len(rs))
	for i, r := range rs {
		granted[i] = grantView(r)
	}
	return
}

// releaseOwn is Release on a ReservationWriter (see grantOwn).
func (s *Service) releaseOwn(ctx context.Context, rw ReservationWriter, p SelectParams) (ReleaseResult, error) {
	var proj Project
	var a Agent
	if err := s.readEach(ctx, func(tx Tx) error {
		var err error
		proj, a, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Agent)
		return err
	}); err != nil {
		return ReleaseResult{}, err
	}
	now := s.clock()
	q := ReservationQuery{ProjectID: proj.ID, AgentID: a.ID, ActiveAt: now, IDs: p.IDs}
	for _, path := range p.Paths {
		q.Patterns = append(q.Patterns, NormalizePattern(path, proj.HumanKey))
	}
	n, err := rw.ReleaseOwn(ctx, q, now.Sub(a.LastActiveAt) >= writerTouchEvery)
	if err != nil {
		return ReleaseResult{}, err
	}
	s.agents.touched(a, now, writerTouchEvery)
	return ReleaseResult{Released: n, ReleasedAt: ts(now)}, nil
}
