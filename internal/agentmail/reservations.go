package agentmail

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Reservation lifetimes. TTLs below a minute are raised to one (with a
// warning): shorter leases expire before another agent can even see them.
const (
	defaultReservationTTL = time.Hour
	minReservationTTL     = time.Minute
	defaultRenewExtension = 30 * time.Minute
)

// GrantView is one granted reservation.
type GrantView struct {
	ID          int64   `json:"id"`
	PathPattern string  `json:"path_pattern"`
	Exclusive   bool    `json:"exclusive"`
	Reason      string  `json:"reason"`
	ExpiresTS   *string `json:"expires_ts"`
}

// HolderView is another agent's reservation in a conflict.
type HolderView struct {
	Agent       string  `json:"agent"`
	PathPattern string  `json:"path_pattern"`
	Exclusive   bool    `json:"exclusive"`
	ExpiresTS   *string `json:"expires_ts"`
}

// ConflictView lists the holders overlapping one requested path.
type ConflictView struct {
	Path    string       `json:"path"`
	Code    string       `json:"code"`
	Holders []HolderView `json:"holders"`
}

// ReserveResult is file_reservation_paths's answer: every path is granted
// (reservations are advisory), and overlaps with other agents' reservations
// are listed as conflicts (code FILE_RESERVATION_CONFLICT) to act on.
type ReserveResult struct {
	Granted   []GrantView    `json:"granted"`
	Conflicts []ConflictView `json:"conflicts"`
	Warnings  []string       `json:"warnings,omitempty"`
}

// ReserveParams are file_reservation_paths's inputs.
type ReserveParams struct {
	ProjectKey string
	Agent      string
	Paths      []string
	TTLSeconds int   // 0 = 3600
	Exclusive  *bool // nil = true
	Reason     string
}

// Bounds of one file_reservation_paths call. Every requested pattern is
// inserted in one write transaction (on SQLite under the store's write
// lock: every agent's sends) and checked against every live reservation
// of the project, so an unbounded request would hold both for as long as
// it takes.
const (
	maxReservePaths   = 1000
	maxPatternBytes   = 1024
	patternQuoteBytes = 40 // of an over-long pattern, shown in the error
)

// Reserve grants reservations on paths or globs and reports conflicts.
// Re-reserving one's own active pattern extends it instead of duplicating it.
func (s *Service) Reserve(ctx context.Context, p ReserveParams) (ReserveResult, error) {
	if len(p.Paths) == 0 {
		return ReserveResult{}, newError("EMPTY_PATHS", ErrInvalidArgument,
			`paths list cannot be empty: pass at least one path or glob relative to the project root, e.g. ["src/**"]`)
	}
	if len(p.Paths) > maxReservePaths {
		return ReserveResult{}, newError("TOO_MANY_PATHS", ErrInvalidArgument,
			`%d paths in one call; the limit is %d: reserve a directory or a glob instead (e.g. "src/**"), or split the call`, len(p.Paths), maxReservePaths)
	}
	for _, raw := range p.Paths {
		if len(raw) > maxPatternBytes {
			return ReserveResult{}, invalid("path %q… is %d bytes; the limit is %d", raw[:patternQuoteBytes], len(raw), maxPatternBytes)
		}
		if problem := patternProblem(raw); problem != "" {
			return ReserveResult{}, invalid("path %q cannot be reserved: %s. Pass a plain path or glob relative to the project root, e.g. src/**", raw, problem)
		}
	}
	exclusive := p.Exclusive == nil || *p.Exclusive
	ttl, warnings := reservationTTL(p.TTLSeconds)
	// A grant is a write and, once it has committed, a read. Reservations
	// are advisory: every path is granted, so the write needs no look at
	// the others' reservations, and it runs at READ COMMITTED (see
	// CommittedWriter), beside every other writer: sends never wait for a
	// grant nor fail because of one (a serializable grant, reading all of
	// the project's reservations, made them retry; queued grants waited
	// through each other's commits). The conflicts are read after the
	// commit, so of two grants racing on overlapping paths the later to
	// commit always lists the earlier: its read follows both commits. A
	// store that can (ReservationWriter: PostgreSQL) runs the write as one
	// statement instead of a transaction.
	var proj Project
	var a Agent
	var now time.Time
	var paths, whole []string
	var granted []GrantView
	var err error
	if rw, ok := s.st.(ReservationWriter); ok { // the same write in one statement
		proj, a, now, paths, whole, granted, err = s.grantOwn(ctx, rw, p, exclusive, ttl)
	} else {
		err = s.writeCommitted(ctx, func(tx Tx) error {
			var err error
			if proj, a, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Agent); err != nil {
				return err
			}
			now = s.clock()
			// Re-reserving one's own active pattern extends it instead of
			// duplicating it.
			mine, err := tx.Reservations(ctx, ReservationQuery{ProjectID: proj.ID, AgentID: a.ID, ActiveAt: now})
			if err != nil {
				return err
			}
			paths, whole = normalizePaths(p.Paths, proj.HumanKey)
			granted = granted[:0]
			var fresh []*Reservation
			var slots []int
			for _, path := range paths {
				if i := slices.IndexFunc(mine, func(r Reservation) bool { return r.PathPattern == path && r.Exclusive == exclusive }); i >= 0 {
					r := mine[i]
					if exp := now.Add(ttl); exp.After(r.ExpiresAt) {
						if err := tx.SetReservationExpiry(ctx, r.ID, exp); err != nil {
							return err
						}
						r.ExpiresAt = exp
					}
					granted = append(granted, grantView(r))
					continue
				}
				fresh = append(fresh, &Reservation{ProjectID: proj.ID, AgentID: a.ID, AgentName: a.Name, PathPattern: path,
					Exclusive: exclusive, Reason: p.Reason, CreatedAt: now, ExpiresAt: now.Add(ttl)})
				granted = append(granted, GrantView{}) // filled once inserted
				slots = append(slots, len(granted)-1)
			}
			if err := tx.GrantReservations(ctx, fresh); err != nil {
				return err
			}
			for i, r := range fresh {
				granted[slots[i]] = grantView(*r)
			}
			return touchWriter(ctx, tx, a, now)
		})
	}
	if err != nil {
		return ReserveResult{}, fmt.Errorf("reserving files: %w", err)
	}
	s.agents.touched(a, now, writerTouchEvery)
	out := ReserveResult{Granted: granted, Conflicts: []ConflictView{}, Warnings: slices.Clone(warnings)}
	for _, raw := range whole {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%q reserves the whole project; prefer narrower paths", raw))
	}
	err = s.readEach(ctx, func(tx Tx) error { // one statement
		active, err := tx.Reservations(ctx, ReservationQuery{ProjectID: proj.ID, ActiveAt: s.clock()})
		if err != nil {
			return err
		}
		out.Conflicts = out.Conflicts[:0]
		compiled := make([]*Pattern, len(active))
		for i, r := range active {
			compiled[i] = CompilePattern(r.PathPattern)
		}
		for _, path := range paths {
			pat := CompilePattern(path)
			var holders []HolderView
			for i, r := range active {
				if r.AgentID != a.ID && (exclusive || r.Exclusive) && Overlap(pat, compiled[i]) {
					holders = append(holders, HolderView{Agent: r.AgentName, PathPattern: r.PathPattern, Exclusive: r.Exclusive, ExpiresTS: ts(r.ExpiresAt)})
				}
			}
			if len(holders) > 0 {
				out.Conflicts = append(out.Conflicts, ConflictView{Path: path, Code: "FILE_RESERVATION_CONFLICT", Holders: holders})
			}
		}
		return nil
	})
	if err != nil {
		return ReserveResult{}, fmt.Errorf("reserving files (granted; reading the conflicts): %w", err)
	}
	if len(out.Conflicts) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("FILE_RESERVATION_CONFLICT: %d path(s) overlap other agents' reservations; "+
			"they were granted (reservations are advisory), but coordinate with the holders before editing, or wait for them to release.", len(out.Conflicts)))
	}
	return out, nil
}

func reservationTTL(seconds int) (time.Duration, []string) {
	if seconds <= 0 {
		return defaultReservationTTL, nil
	}
	ttl := time.Duration(seconds) * time.Second
	if ttl < minReservationTTL {
		return minReservationTTL, []string{fmt.Sprintf("ttl_seconds=%d is below the minimum; the reservation lasts 60 seconds", seconds)}
	}
	return ttl, nil
}

func grantView(r Reservation) GrantView {
	return GrantView{ID: r.ID, PathPattern: r.PathPattern, Exclusive: r.Exclusive, Reason: r.Reason, ExpiresTS: ts(r.ExpiresAt)}
}

// SelectParams pick some of an agent's active reservations: by pattern, by
// id, or (neither given) all of them.
type SelectParams struct {
	ProjectKey string
	Agent      string
	Paths      []string
	IDs        []int64
}

// ReleaseResult is release_file_reservations's answer.
type ReleaseResult struct {
	Released   int     `json:"released"`
	ReleasedAt *string `json:"released_at"`
}

// Release releases the agent's selected active reservations. It takes no
// lock: it changes only the agent's own rows, by id, and a grant reading
// a reservation as it is released lists it or not, both true a moment
// apart (see Reserve).
func (s *Service) Release(ctx context.Context, p SelectParams) (ReleaseResult, error) {
	if rw, ok := s.st.(ReservationWriter); ok { // the same write in one statement
		out, err := s.releaseOwn(ctx, rw, p)
		if err != nil {
			return ReleaseResult{}, fmt.Errorf("releasing file reservations: %w", err)
		}
		return out, nil
	}
	var out ReleaseResult
	err := s.writeMine(ctx, p, func(tx Tx, mine []Reservation, now time.Time) error {
		for _, r := range mine {
			if err := tx.ReleaseReservation(ctx, r.ID, now); err != nil {
				return err
			}
		}
		out = ReleaseResult{Released: len(mine), ReleasedAt: ts(now)}
		return nil
	})
	if err != nil {
		return ReleaseResult{}, fmt.Errorf("releasing file reservations: %w", err)
	}
	return out, nil
}

// writeMine runs fn on the agent's selected active reservations (mine) in
// a write without the lock (see Release), and records the agent's
// activity: the body of Release and Renew.
func (s *Service) writeMine(ctx context.Context, p SelectParams, fn func(tx Tx, mine []Reservation, now time.Time) error) error {
	var a Agent
	var now time.Time
	err := s.writeCommitted(ctx, func(tx Tx) error {
		var proj Project
		var err error
		if proj, a, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Agent); err != nil {
			return err
		}
		now = s.clock()
		q := ReservationQuery{ProjectID: proj.ID, AgentID: a.ID, ActiveAt: now, IDs: p.IDs}
		for _, path := range p.Paths {
			q.Patterns = append(q.Patterns, NormalizePattern(path, proj.HumanKey))
		}
		mine, err := tx.Reservations(ctx, q)
		if err != nil {
			return err
		}
		if err := fn(tx, mine, now); err != nil {
			return err
		}
		return touchWriter(ctx, tx, a, now)
	})
	if err == nil {
		s.agents.touched(a, now, writerTouchEvery)
	}
	return err
}

// RenewParams are renew_file_reservations's inputs.
type RenewParams struct {
	SelectParams
	ExtendSeconds int // 0 = 1800; at least 60
	NewTTLSeconds int // if set: expire this long from now instead
}

// RenewedView is one renewed reservation.
type RenewedView struct {
	ID           int64   `json:"id"`
	PathPattern  string  `json:"path_pattern"`
	OldExpiresTS *string `json:"old_expires_ts"`
	NewExpiresTS *string `json:"new_expires_ts"`
}

// RenewResult is renew_file_reservations's answer.
type RenewResult struct {
	Renewed          int           `json:"renewed"`
	FileReservations []RenewedView `json:"file_reservations"`
}

// Renew extends the agent's selected active reservations (like Release,
// without the lock).
func (s *Service) Renew(ctx context.Context, p RenewParams) (RenewResult, error) {
	ext := ttlOr(p.ExtendSeconds, defaultRenewExtension)
	ext = max(ext, minReservationTTL)
	var out RenewResult
	err := s.writeMine(ctx, p.SelectParams, func(tx Tx, mine []Reservation, now time.Time) error {
		out = RenewResult{FileReservations: []RenewedView{}}
		for _, r := range mine {
			next := r.ExpiresAt
			if next.Before(now) {
				next = now
			}
			next = next.Add(ext)
			if p.NewTTLSeconds > 0 {
				next = now.Add(max(time.Duration(p.NewTTLSeconds)*time.Second, minReservationTTL))
			}
			if err := tx.SetReservationExpiry(ctx, r.ID, next); err != nil {
				return err
			}
			out.FileReservations = append(out.FileReservations, RenewedView{ID: r.ID, PathPattern: r.PathPattern, OldExpiresTS: ts(r.ExpiresAt), NewExpiresTS: ts(next)})
		}
		out.Renewed = len(out.FileReservations)
		return nil
	})
	if err != nil {
		return RenewResult{}, fmt.Errorf("renewing file reservations: %w", err)
	}
	return out, nil
}

// writerTouchEvery is how old an agent's heartbeat must be for a
// reservation write to write it again (see touchWriter).
const writerTouchEvery = time.Second

// touchWriter records that an agent writing reservations is alive, at most
// once a second, as a send does: each touch is a new version of the
// agent's row, which on PostgreSQL every later lookup of the agent walks
// past until the page is pruned, and a grant and its release come in
// pairs.
func touchWriter(ctx context.Context, tx Tx, a Agent, now time.Time) error {
	if now.Sub(a.LastActiveAt) < writerTouchEvery {
		return nil
	}
	return tx.TouchAgent(ctx, a.ID, now)
}
