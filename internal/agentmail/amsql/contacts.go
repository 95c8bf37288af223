package amsql

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const linkCols = `l.id, l.from_agent_id, l.to_agent_id, fa.name, ta.name, fp.human_key, tp.human_key,
	l.status, l.reason, l.created_us, l.updated_us, l.expires_us`

const linkFrom = ` FROM am_contacts l
	JOIN am_agents fa ON fa.id = l.from_agent_id JOIN am_projects fp ON fp.id = fa.project_id
	JOIN am_agents ta ON ta.id = l.to_agent_id JOIN am_projects tp ON tp.id = ta.project_id`

func scanLink(row Row) (agentmail.ContactLink, error) {
	var l agentmail.ContactLink
	if err := row.Scan(&l.ID, &l.FromAgentID, &l.ToAgentID, &l.FromName, &l.ToName, &l.FromProject, &l.ToProject,
		&l.Status, &l.Reason, Time(&l.CreatedAt), Time(&l.UpdatedAt), Time(&l.ExpiresAt)); err != nil {
		return agentmail.ContactLink{}, NotFound(err)
	}
	return l, nil
}

var (
	link = define(`SELECT id, status, reason, created_us, updated_us, expires_us FROM am_contacts
		WHERE from_agent_id = ? AND to_agent_id = ?`)
	linkPair = define(`SELECT id, from_agent_id, status, reason, created_us, updated_us, expires_us FROM am_contacts
		WHERE (from_agent_id = ?1 AND to_agent_id = ?2) OR (from_agent_id = ?2 AND to_agent_id = ?1)`)
	upsertLink = define(`INSERT INTO am_contacts (from_agent_id, to_agent_id, status, reason, created_us, updated_us, expires_us)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (from_agent_id, to_agent_id) DO UPDATE SET status = excluded.status, reason = excluded.reason,
			updated_us = excluded.updated_us, expires_us = excluded.expires_us
		RETURNING id`)
	linksFrom = define(`SELECT ` + linkCols + linkFrom + ` WHERE l.from_agent_id = ? ORDER BY l.id`)
	linksTo   = define(`SELECT ` + linkCols + linkFrom + ` WHERE l.to_agent_id = ? ORDER BY l.id`)
)

// Link reads one link without names: it runs on every send, and a plain
// probe of the unique index is the cheapest statement there is.
func (t *Tx) Link(ctx context.Context, from, to int64) (agentmail.ContactLink, error) {
	l := agentmail.ContactLink{FromAgentID: from, ToAgentID: to}
	err := t.queryRow(ctx, link, from, to).Scan(&l.ID, &l.Status, &l.Reason, Time(&l.CreatedAt), Time(&l.UpdatedAt), Time(&l.ExpiresAt))
	if err != nil {
		return agentmail.ContactLink{}, NotFound(err)
	}
	return l, nil
}

func (t *Tx) LinkPair(ctx context.Context, a, b int64) (ab, ba agentmail.ContactLink, err error) {
	rows, err := t.query(ctx, linkPair, a, b)
	if err != nil {
		return ab, ba, err
	}
	err = each(rows, func(row Row) error {
		var l agentmail.ContactLink
		if err := row.Scan(&l.ID, &l.FromAgentID, &l.Status, &l.Reason, Time(&l.CreatedAt), Time(&l.UpdatedAt), Time(&l.ExpiresAt)); err != nil {
			return err
		}
		// (Set before the copy: both engines once assigned the two in one
		// statement, which copies l first and left ToAgentID zero.)
		if l.FromAgentID == a {
			l.ToAgentID = b
			ab = l
		} else {
			l.ToAgentID = a
			ba = l
		}
		return nil
	})
	return ab, ba, err
}

func (t *Tx) UpsertLink(ctx context.Context, l *agentmail.ContactLink) error {
	return t.insertID(ctx, &l.ID, upsertLink, l.FromAgentID, l.ToAgentID, l.Status, l.Reason, US(l.CreatedAt), US(l.UpdatedAt), US(l.ExpiresAt))
}

func (t *Tx) LinksFrom(ctx context.Context, agentID int64) ([]agentmail.ContactLink, error) {
	return t.links(ctx, linksFrom, agentID)
}

func (t *Tx) LinksTo(ctx context.Context, agentID int64) ([]agentmail.ContactLink, error) {
	return t.links(ctx, linksTo, agentID)
}

func (t *Tx) links(ctx context.Context, s stmt, agentID int64) ([]agentmail.ContactLink, error) {
	return all(ctx, t, s, scanLink, agentID)
}
