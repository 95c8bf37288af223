package postgres

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const resCols = `r.id, r.project_id, r.agent_id, a.name, r.path_pattern, r.exclusive <> 0, r.reason, r.created_us, r.expires_us, r.released_us`

func scanReservation(row scanner) (agentmail.Reservation, error) {
	var r agentmail.Reservation
	var created, expires, released sql.NullInt64
	if err := row.Scan(&r.ID, &r.ProjectID, &r.AgentID, &r.AgentName, &r.PathPattern, &r.Exclusive, &r.Reason, &created, &expires, &released); err != nil {
		return agentmail.Reservation{}, notFound(err)
	}
	r.CreatedAt, r.ExpiresAt, r.ReleasedAt = fromUS(created), fromUS(expires), fromUS(released)
	return r, nil
}

func (t *tx) Reservations(ctx context.Context, q agentmail.ReservationQuery) ([]agentmail.Reservation, error) {
	var b strings.Builder
	var p params
	b.WriteString(`SELECT ` + resCols + ` FROM am_reservations r JOIN am_agents a ON a.id = r.agent_id WHERE r.project_id = ` + p.add(q.ProjectID))
	if q.AgentID != 0 {
		b.WriteString(` AND r.agent_id = ` + p.add(q.AgentID))
	}
	if !q.ActiveAt.IsZero() {
		b.WriteString(` AND r.released_us IS NULL AND r.expires_us > ` + p.add(us(q.ActiveAt)))
	}
	if len(q.IDs) > 0 {
		b.WriteString(` AND r.id = ANY(` + p.add(q.IDs) + `::bigint[])`)
	}
	if len(q.Patterns) > 0 {
		b.WriteString(` AND r.path_pattern = ANY(` + p.add(q.Patterns) + `::text[])`)
	}
	b.WriteString(` ORDER BY r.id`)
	rows, err := t.query(ctx, b.String(), p...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.Reservation
	for rows.Next() {
		r, err := scanReservation(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (t *tx) ReservationByID(ctx context.Context, id int64) (agentmail.Reservation, error) {
	return scanReservation(t.queryRow(ctx, `SELECT `+resCols+` FROM am_reservations r JOIN am_agents a ON a.id = r.agent_id WHERE r.id = $1`, id))
}

// InsertReservations inserts one grant's patterns in one statement, and
// gives each reservation the id returned for its pattern.
func (t *tx) InsertReservations(ctx context.Context, rs []*agentmail.Reservation) error {
	if len(rs) == 0 {
		return nil
	}
	r0 := rs[0]
	patterns := make([]string, len(rs))
	byPattern := make(map[string]*agentmail.Reservation, len(rs))
	for i, r := range rs {
		patterns[i] = r.PathPattern
		byPattern[r.PathPattern] = r
	}
	rows, err := t.query(ctx, `INSERT INTO am_reservations (project_id, agent_id, path_pattern, exclusive, reason, created_us, expires_us)
		SELECT $1::bigint, $2::bigint, p, $3::integer, $4::text, $5::bigint, $6::bigint FROM unnest($7::text[]) AS p
		RETURNING id, path_pattern`,
		r0.ProjectID, r0.AgentID, flag(r0.Exclusive), r0.Reason, us(r0.CreatedAt), us(r0.ExpiresAt), patterns)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p string
		if err := rows.Scan(&id, &p); err != nil {
			return err
		}
		if r := byPattern[p]; r != nil {
			r.ID = id
		}
	}
	return mapErr(rows.Err())
}

func (t *tx) SetReservationExpiry(ctx context.Context, id int64, expires time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_reservations SET expires_us = $1 WHERE id = $2`, us(expires), id)
	return err
}

func (t *tx) ReleaseReservation(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_reservations SET released_us = $1 WHERE id = $2 AND released_us IS NULL`, us(at), id)
	return err
}
