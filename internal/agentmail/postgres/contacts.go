package postgres

import (
	"context"
	"database/sql"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const linkCols = `l.id, l.from_agent_id, l.to_agent_id, fa.name, ta.name, fp.human_key, tp.human_key,
	l.status, l.reason, l.created_us, l.updated_us, l.expires_us`

const linkFrom = ` FROM am_contacts l
	JOIN am_agents fa ON fa.id = l.from_agent_id JOIN am_projects fp ON fp.id = fa.project_id
	JOIN am_agents ta ON ta.id = l.to_agent_id JOIN am_projects tp ON tp.id = ta.project_id`

func scanLink(row scanner) (agentmail.ContactLink, error) {
	var l agentmail.ContactLink
	var created, updated, expires sql.NullInt64
	if err := row.Scan(&l.ID, &l.FromAgentID, &l.ToAgentID, &l.FromName, &l.ToName, &l.FromProject, &l.ToProject,
		&l.Status, &l.Reason, &created, &updated, &expires); err != nil {
		return agentmail.ContactLink{}, notFound(err)
	}
	l.CreatedAt, l.UpdatedAt, l.ExpiresAt = fromUS(created), fromUS(updated), fromUS(expires)
	return l, nil
}

// Link reads one link without names: it runs on every send, and a plain
// probe of the unique index is the cheapest statement there is.
func (t *tx) Link(ctx context.Context, from, to int64) (agentmail.ContactLink, error) {
	l := agentmail.ContactLink{FromAgentID: from, ToAgentID: to}
	var created, updated, expires sql.NullInt64
	err := t.queryRow(ctx, `SELECT id, status, reason, created_us, updated_us, expires_us FROM am_contacts
		WHERE from_agent_id = $1 AND to_agent_id = $2`, from, to).Scan(&l.ID, &l.Status, &l.Reason, &created, &updated, &expires)
	if err != nil {
		return agentmail.ContactLink{}, notFound(err)
	}
	l.CreatedAt, l.UpdatedAt, l.ExpiresAt = fromUS(created), fromUS(updated), fromUS(expires)
	return l, nil
}

func (t *tx) LinkPair(ctx context.Context, a, b int64) (ab, ba agentmail.ContactLink, err error) {
	rows, err := t.query(ctx, `SELECT id, from_agent_id, status, reason, created_us, updated_us, expires_us FROM am_contacts
		WHERE (from_agent_id = $1 AND to_agent_id = $2) OR (from_agent_id = $2 AND to_agent_id = $1)`, a, b)
	if err != nil {
		return ab, ba, err
	}
	defer rows.Close()
	for rows.Next() {
		var l agentmail.ContactLink
		var created, updated, expires sql.NullInt64
		if err := rows.Scan(&l.ID, &l.FromAgentID, &l.Status, &l.Reason, &created, &updated, &expires); err != nil {
			return ab, ba, err
		}
		l.CreatedAt, l.UpdatedAt, l.ExpiresAt = fromUS(created), fromUS(updated), fromUS(expires)
		if l.FromAgentID == a {
			l.ToAgentID, ab = b, l
		} else {
			l.ToAgentID, ba = a, l
		}
	}
	return ab, ba, rows.Err()
}

func (t *tx) UpsertLink(ctx context.Context, l *agentmail.ContactLink) error {
	id, err := t.insertID(ctx, `INSERT INTO am_contacts (from_agent_id, to_agent_id, status, reason, created_us, updated_us, expires_us)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (from_agent_id, to_agent_id) DO UPDATE SET status = excluded.status, reason = excluded.reason,
			updated_us = excluded.updated_us, expires_us = excluded.expires_us
		RETURNING id`,
		l.FromAgentID, l.ToAgentID, l.Status, l.Reason, us(l.CreatedAt), us(l.UpdatedAt), us(l.ExpiresAt))
	if err != nil {
		return err
	}
	l.ID = id
	return nil
}

func (t *tx) links(ctx context.Context, where string, id int64) ([]agentmail.ContactLink, error) {
	rows, err := t.query(ctx, `SELECT `+linkCols+linkFrom+` WHERE `+where+` ORDER BY l.id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.ContactLink
	for rows.Next() {
		l, err := scanLink(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func (t *tx) LinksFrom(ctx context.Context, agentID int64) ([]agentmail.ContactLink, error) {
	return t.links(ctx, `l.from_agent_id = $1`, agentID)
}

func (t *tx) LinksTo(ctx context.Context, agentID int64) ([]agentmail.ContactLink, error) {
	return t.links(ctx, `l.to_agent_id = $1`, agentID)
}
