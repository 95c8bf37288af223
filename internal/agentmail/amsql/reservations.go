package amsql

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

const resCols = `r.id, r.project_id, r.agent_id, a.name, r.path_pattern, r.exclusive <> 0, r.reason, r.created_us, r.expires_us, r.released_us`

func scanReservation(row Row) (agentmail.Reservation, error) {
	var r agentmail.Reservation
	if err := row.Scan(&r.ID, &r.ProjectID, &r.AgentID, &r.AgentName, &r.PathPattern, &r.Exclusive, &r.Reason,
		Time(&r.CreatedAt), Time(&r.ExpiresAt), Time(&r.ReleasedAt)); err != nil {
		return agentmail.Reservation{}, NotFound(err)
	}
	return r, nil
}

var (
	reservationByID = define(`SELECT ` + resCols + ` FROM am_reservations r JOIN am_agents a ON a.id = r.agent_id WHERE r.id = ?`)
	// One statement inserts a grant's patterns, a row each. The casts type
	// the parameters on PostgreSQL, where an INSERT … SELECT does not take
	// them from the columns; SQLite's column affinity gives the same values.
	insertReservations = defineFor(func(d *Dialect) string {
		return `INSERT INTO am_reservations (project_id, agent_id, path_pattern, exclusive, reason, created_us, expires_us)
		SELECT CAST(? AS BIGINT), CAST(? AS BIGINT), value, CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT)
		FROM ` + d.EachString("?") + ` RETURNING id, path_pattern`
	})
	setReservationExpiry = define(`UPDATE am_reservations SET expires_us = ? WHERE id = ?`)
	releaseReservation   = define(`UPDATE am_reservations SET released_us = ? WHERE id = ? AND released_us IS NULL`)
)

func (t *Tx) Reservations(ctx context.Context, q agentmail.ReservationQuery) ([]agentmail.Reservation, error) {
	b := t.build()
	d := &t.sql.d
	b.WriteString(`SELECT ` + resCols + ` FROM am_reservations r JOIN am_agents a ON a.id = r.agent_id WHERE r.project_id = ` + b.arg(q.ProjectID))
	if q.AgentID != 0 {
		b.WriteString(` AND r.agent_id = ` + b.arg(q.AgentID))
	}
	if !q.ActiveAt.IsZero() {
		b.WriteString(` AND r.released_us IS NULL AND r.expires_us > ` + b.arg(US(q.ActiveAt)))
	}
	if len(q.IDs) > 0 {
		b.WriteString(` AND ` + d.InIDs("r.id", b.arg(d.IDs(q.IDs))))
	}
	if len(q.Patterns) > 0 {
		b.WriteString(` AND ` + d.InStrings("r.path_pattern", b.arg(d.Strings(q.Patterns))))
	}
	b.WriteString(` ORDER BY r.id`)
	rows, err := b.query(ctx, t)
	if err != nil {
		return nil, err
	}
	return Collect(rows, scanReservation)
}

func (t *Tx) ReservationByID(ctx context.Context, id int64) (agentmail.Reservation, error) {
	return scanReservation(t.queryRow(ctx, reservationByID, id))
}

// InsertReservations inserts one grant's patterns in one statement, and
// gives each reservation the id returned for its pattern.
func (t *Tx) InsertReservations(ctx context.Context, rs []*agentmail.Reservation) error {
	if len(rs) == 0 {
		return nil
	}
	rows, err := t.query(ctx, insertReservations, GrantArgs(rs, t.sql.d.Strings)...)
	if err != nil {
		return err
	}
	return t.sql.d.MapErr(ScanGrant(rows, rs))
}

// GrantArgs are the arguments of a statement inserting rs, one grant (one
// agent's patterns, alike but for the pattern): the fields they share,
// then the patterns as one list parameter (list is the Dialect's Strings).
func GrantArgs(rs []*agentmail.Reservation, list func([]string) any) []any {
	r0 := rs[0]
	patterns := make([]string, len(rs))
	for i, r := range rs {
		patterns[i] = r.PathPattern
	}
	return []any{r0.ProjectID, r0.AgentID, store.Flag(r0.Exclusive), r0.Reason, US(r0.CreatedAt), US(r0.ExpiresAt), list(patterns)}
}

// ScanGrant reads the rows (id, path_pattern) a grant's insert returns and
// gives each of rs the id returned for its pattern.
func ScanGrant(rows *sql.Rows, rs []*agentmail.Reservation) error {
	byPattern := make(map[string]*agentmail.Reservation, len(rs))
	for _, r := range rs {
		byPattern[r.PathPattern] = r
	}
	return each(rows, func(row Row) error {
		var id int64
		var p string
		err := row.Scan(&id, &p)
		if r := byPattern[p]; r != nil && err == nil {
			r.ID = id
		}
		return err
	})
}

func (t *Tx) SetReservationExpiry(ctx context.Context, id int64, expires time.Time) error {
	_, err := t.exec(ctx, setReservationExpiry, US(expires), id)
	return err
}

func (t *Tx) ReleaseReservation(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, releaseReservation, US(at), id)
	return err
}

// GrantReservations is InsertReservations: on SQLite writers run one at a
// time already. The PostgreSQL store takes a lock with it (see its tx).
func (t *Tx) GrantReservations(ctx context.Context, rs []*agentmail.Reservation) error {
	return t.InsertReservations(ctx, rs)
}
