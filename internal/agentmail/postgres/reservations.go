package postgres

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
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
