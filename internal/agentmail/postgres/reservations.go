package postgres

import (
	"context"
	"fmt"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// grantSQL inserts a grant's patterns, a row each, once it holds the
// project's reservation lock ($8) in shared mode: every joined row needs
// the lock's one row, so no row is inserted before the lock is taken (a
// CTE calling a volatile function is evaluated once, never inlined).
//
// Shared, because the lock orders grants with channel claims only (a
// claim holds it exclusively, see writeQueued): grants need no order among
// themselves, as the later of two racing grants to commit lists the
// earlier in the conflicts it reads after its commit (agentmail.Service.
// Reserve). Taken exclusively, every grant of a project waited for the
// one before it to commit (its WAL flush included): at 30 clients most
// of a grant's time was that queue.
const grantSQL = `WITH l AS (SELECT pg_advisory_xact_lock_shared($8))
	INSERT INTO am_reservations (project_id, agent_id, path_pattern, exclusive, reason, created_us, expires_us)
	SELECT $1::bigint, $2::bigint, j.value, $3::integer, $4::text, $5::bigint, $6::bigint
	FROM l, unnest($7::text[]) AS j(value) RETURNING id, path_pattern`

// GrantReservations inserts a grant's reservations holding the project's
// reservation lock (shared: see grantSQL) until the transaction ends (see
// agentmail.ReservationTx.GrantReservations), in the statement that
// inserts them: the lock is held for that statement and the commit only,
// never for a round trip of the caller's between them.
func (t *tx) GrantReservations(ctx context.Context, rs []*agentmail.Reservation) error {
	if len(rs) == 0 {
		return nil
	}
	args := append(amsql.GrantArgs(rs, dialect.Strings), reservationLockKey(rs[0].ProjectID))
	rows, err := t.query(ctx, grantSQL, args...)
	if err != nil {
		return err
	}
	return dialect.MapErr(t.note(amsql.ScanGrant(rows, rs)))
}

var _ agentmail.ReservationWriter = (*Store)(nil)

// grantOwnSQL is a grant in one statement (see agentmail.ReservationWriter):
// the agent's own active reservations of a requested pattern and the same
// exclusivity ($4) are extended to $7 when that is later (the oldest one
// per pattern, as Reserve's transaction picks it), the other patterns are
// inserted under the project's reservation lock ($9, shared, taken as
// grantSQL takes it: no row is inserted before it is held), and the
// agent's heartbeat is written when $8. Data-modifying WITH clauses run to
// completion whether or not the answer reads them. The answer is a row per
// requested pattern ($3), in its order: the reservation's id, reason and
// expiry.
//
// It runs in autocommit at READ COMMITTED, as Reserve's transaction did:
// a grant reads nothing but the agent's own rows, and of two grants racing
// on overlapping paths the later to commit lists the earlier in the
// conflicts Reserve reads after it. A release of the same row committing
// meanwhile is seen by the UPDATE's recheck (released_us IS NULL), as by
// the transaction's UPDATE by id.
const grantOwnSQL = `WITH l AS (SELECT pg_advisory_xact_lock_shared($9)),
	req AS (SELECT q.path, q.ord FROM unnest($3::text[]) WITH ORDINALITY AS q(path, ord)),
	mine AS (
		SELECT DISTINCT ON (r.path_pattern) r.id, r.path_pattern, r.reason, r.expires_us
		FROM am_reservations r
		WHERE r.project_id = $1 AND r.agent_id = $2 AND r.released_us IS NULL AND r.expires_us > $6
			AND r.exclusive = $4::integer AND r.path_pattern = ANY($3::text[])
		ORDER BY r.path_pattern, r.id),
	ext AS (
		UPDATE am_reservations u SET expires_us = $7 FROM mine
		WHERE u.id = mine.id AND mine.expires_us < $7 AND u.released_us IS NULL),
	ins AS (
		INSERT INTO am_reservations (project_id, agent_id, path_pattern, exclusive, reason, created_us, expires_us)
		SELECT $1::bigint, $2::bigint, req.path, $4::integer, $5::text, $6::bigint, $7::bigint
		FROM l, req WHERE NOT EXISTS (SELECT 1 FROM mine WHERE mine.path_pattern = req.path)
		ORDER BY req.ord
		RETURNING id, path_pattern),
	touch AS (
		UPDATE am_agents SET last_active_us = $6 WHERE id = $2 AND $8::boolean AND last_active_us < $6)
	SELECT coalesce(mine.id, ins.id), coalesce(mine.reason, $5::text), greatest(mine.expires_us, $7::bigint)
	FROM req LEFT JOIN mine ON mine.path_pattern = req.path LEFT JOIN ins ON ins.path_pattern = req.path
	ORDER BY req.ord`

// GrantOwn implements agentmail.ReservationWriter (see grantOwnSQL): one
// round trip, where the transaction costs four.
func (s *Store) GrantOwn(ctx context.Context, g agentmail.OwnGrant) ([]agentmail.Reservation, error) {
	if len(g.Paths) == 0 {
		return nil, nil
	}
	var out []agentmail.Reservation
	err := s.db.Retry(ctx, func() error { // a deadlock with the agent's own release
		out = out[:0]
		rows, err := s.db.QueryContext(ctx, grantOwnSQL, g.ProjectID, g.AgentID, g.Paths, store.Flag(g.Exclusive), g.Reason,
			amsql.US(g.At), amsql.US(g.Expires), g.Touch, reservationLockKey(g.ProjectID))
		if err != nil {
			return err
		}
		defer rows.Close()
		for i := 0; rows.Next(); i++ {
			r := agentmail.Reservation{ProjectID: g.ProjectID, AgentID: g.AgentID, Exclusive: g.Exclusive}
			if err := rows.Scan(&r.ID, &r.Reason, amsql.Time(&r.ExpiresAt)); err != nil {
				return err
			}
			if i < len(g.Paths) {
				r.PathPattern = g.Paths[i]
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dialect.MapErr(err)
	}
	if len(out) != len(g.Paths) {
		return nil, fmt.Errorf("granting %d patterns: %d rows came back", len(g.Paths), len(out))
	}
	return out, nil
}

// releaseOwnSQL releases the agent's active reservations, those of the ids
// $4 and the patterns $5 when given, and writes its heartbeat when $6, in
// one autocommit statement (see agentmail.ReservationWriter). A row a
// concurrent release took first fails the UPDATE's recheck and is not
// counted.
const releaseOwnSQL = `WITH rel AS (
		UPDATE am_reservations SET released_us = $3
		WHERE project_id = $1 AND agent_id = $2 AND released_us IS NULL AND expires_us > $3
			AND ($4::bigint[] IS NULL OR id = ANY($4::bigint[]))
			AND ($5::text[] IS NULL OR path_pattern = ANY($5::text[]))
		RETURNING 1),
	touch AS (
		UPDATE am_agents SET last_active_us = $3 WHERE id = $2 AND $6::boolean AND last_active_us < $3)
	SELECT count(*) FROM rel`

// ReleaseOwn implements agentmail.ReservationWriter (see releaseOwnSQL).
func (s *Store) ReleaseOwn(ctx context.Context, q agentmail.ReservationQuery, touch bool) (int, error) {
	var ids, patterns any // NULL: no such condition
	if len(q.IDs) > 0 {
		ids = q.IDs
	}
	if len(q.Patterns) > 0 {
		patterns = q.Patterns
	}
	var n int
	err := s.db.Retry(ctx, func() error {
		return s.db.QueryRowContext(ctx, releaseOwnSQL, q.ProjectID, q.AgentID, amsql.US(q.ActiveAt), ids, patterns, touch).Scan(&n)
	})
	return n, dialect.MapErr(err)
}
