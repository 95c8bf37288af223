package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const projectCols = `id, slug, human_key, created_us`

func scanProject(row scanner) (agentmail.Project, error) {
	var p agentmail.Project
	var created sql.NullInt64
	if err := row.Scan(&p.ID, &p.Slug, &p.HumanKey, &created); err != nil {
		return agentmail.Project{}, notFound(err)
	}
	p.CreatedAt = fromUS(created)
	return p, nil
}

func (t *tx) ProjectByID(ctx context.Context, id int64) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, `SELECT `+projectCols+` FROM am_projects WHERE id = $1`, id))
}

func (t *tx) ProjectBySlug(ctx context.Context, slug string) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, `SELECT `+projectCols+` FROM am_projects WHERE slug = $1`, slug))
}

func (t *tx) ProjectByHumanKey(ctx context.Context, humanKey string) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, `SELECT `+projectCols+` FROM am_projects WHERE human_key = $1`, humanKey))
}

func (t *tx) InsertProject(ctx context.Context, p *agentmail.Project) error {
	id, err := t.insertID(ctx, `INSERT INTO am_projects (slug, human_key, created_us) VALUES ($1, $2, $3) RETURNING id`,
		p.Slug, p.HumanKey, us(p.CreatedAt))
	if err != nil {
		return err
	}
	p.ID = id
	return nil
}

func (t *tx) Projects(ctx context.Context) ([]agentmail.Project, error) {
	rows, err := t.query(ctx, `SELECT `+projectCols+` FROM am_projects ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

const agentCols = `id, project_id, name, program, model, task_description, inception_us, last_active_us, attachments_policy, contact_policy`

func scanAgent(row scanner) (agentmail.Agent, error) {
	var a agentmail.Agent
	var inc, last sql.NullInt64
	var policy string
	if err := row.Scan(&a.ID, &a.ProjectID, &a.Name, &a.Program, &a.Model, &a.TaskDescription, &inc, &last, &a.AttachmentsPolicy, &policy); err != nil {
		return agentmail.Agent{}, notFound(err)
	}
	a.InceptionAt, a.LastActiveAt, a.ContactPolicy = fromUS(inc), fromUS(last), agentmail.Policy(policy)
	return a, nil
}

func (t *tx) AgentByID(ctx context.Context, id int64) (agentmail.Agent, error) {
	return scanAgent(t.queryRow(ctx, `SELECT `+agentCols+` FROM am_agents WHERE id = $1`, id))
}

// AgentByName folds case as the unique index am_agents_name does (ASCII
// only, under the column's "C" collation), so the lookup is an index probe.
func (t *tx) AgentByName(ctx context.Context, projectID int64, name string) (agentmail.Agent, error) {
	return scanAgent(t.queryRow(ctx, `SELECT `+agentCols+` FROM am_agents WHERE project_id = $1 AND lower(name) = lower($2::text COLLATE "C")`,
		projectID, name))
}

func (t *tx) Agents(ctx context.Context, projectID int64) ([]agentmail.Agent, error) {
	rows, err := t.query(ctx, `SELECT `+agentCols+` FROM am_agents WHERE project_id = $1 ORDER BY id`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.Agent
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (t *tx) InsertAgent(ctx context.Context, a *agentmail.Agent) error {
	id, err := t.insertID(ctx, `INSERT INTO am_agents (project_id, name, program, model, task_description, inception_us, last_active_us, attachments_policy, contact_policy)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		a.ProjectID, a.Name, a.Program, a.Model, a.TaskDescription, us(a.InceptionAt), us(a.LastActiveAt), a.AttachmentsPolicy, string(a.ContactPolicy))
	if err != nil {
		return err
	}
	a.ID = id
	return nil
}

func (t *tx) UpdateAgent(ctx context.Context, a agentmail.Agent) error {
	_, err := t.exec(ctx, `UPDATE am_agents SET program = $1, model = $2, task_description = $3, attachments_policy = $4, contact_policy = $5,
		last_active_us = greatest(last_active_us, coalesce($6::bigint, 0)) WHERE id = $7`,
		a.Program, a.Model, a.TaskDescription, a.AttachmentsPolicy, string(a.ContactPolicy), us(a.LastActiveAt), a.ID)
	return err
}

// TouchAgent notes the agent's activity; the store writes it once the
// transaction has committed (see Store.touch).
func (t *tx) TouchAgent(ctx context.Context, agentID int64, at time.Time) error {
	if t.touches == nil {
		t.touches = map[int64]time.Time{}
	}
	if at.After(t.touches[agentID]) {
		t.touches[agentID] = at
	}
	return nil
}

func (t *tx) UnreadCounts(ctx context.Context, projectID int64) (map[int64]int, error) {
	rows, err := t.query(ctx, `SELECT r.agent_id, count(*) FROM am_agents a JOIN am_recipients r ON r.agent_id = a.id
		WHERE a.project_id = $1 AND r.delivered_us IS NOT NULL AND r.read_us IS NULL GROUP BY r.agent_id`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}
