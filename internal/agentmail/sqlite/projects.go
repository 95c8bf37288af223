package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

const projectCols = `id, slug, human_key, created_us`

func scanProject(row interface{ Scan(...any) error }) (agentmail.Project, error) {
	var p agentmail.Project
	var created sql.NullInt64
	if err := row.Scan(&p.ID, &p.Slug, &p.HumanKey, &created); err != nil {
		return agentmail.Project{}, notFound(err)
	}
	p.CreatedAt = fromUS(created)
	return p, nil
}

func (t *tx) projectWhere(ctx context.Context, where string, arg any) (agentmail.Project, error) {
	row, err := t.queryRow(ctx, `SELECT `+projectCols+` FROM am_projects WHERE `+where, arg)
	if err != nil {
		return agentmail.Project{}, err
	}
	return scanProject(row)
}

func (t *tx) ProjectByID(ctx context.Context, id int64) (agentmail.Project, error) {
	return t.projectWhere(ctx, `id = ?`, id)
}

func (t *tx) ProjectBySlug(ctx context.Context, slug string) (agentmail.Project, error) {
	return t.projectWhere(ctx, `slug = ?`, slug)
}

func (t *tx) ProjectByHumanKey(ctx context.Context, humanKey string) (agentmail.Project, error) {
	return t.projectWhere(ctx, `human_key = ?`, humanKey)
}

func (t *tx) InsertProject(ctx context.Context, p *agentmail.Project) error {
	res, err := t.exec(ctx, `INSERT INTO am_projects (slug, human_key, created_us) VALUES (?, ?, ?)`, p.Slug, p.HumanKey, us(p.CreatedAt))
	if err != nil {
		return err
	}
	p.ID, err = res.LastInsertId()
	return err
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

func scanAgent(row interface{ Scan(...any) error }) (agentmail.Agent, error) {
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
	row, err := t.queryRow(ctx, `SELECT `+agentCols+` FROM am_agents WHERE id = ?`, id)
	if err != nil {
		return agentmail.Agent{}, err
	}
	return scanAgent(row)
}

func (t *tx) AgentByName(ctx context.Context, projectID int64, name string) (agentmail.Agent, error) {
	row, err := t.queryRow(ctx, `SELECT `+agentCols+` FROM am_agents WHERE project_id = ? AND name = ?`, projectID, name)
	if err != nil {
		return agentmail.Agent{}, err
	}
	return scanAgent(row)
}

func (t *tx) Agents(ctx context.Context, projectID int64) ([]agentmail.Agent, error) {
	rows, err := t.query(ctx, `SELECT `+agentCols+` FROM am_agents WHERE project_id = ? ORDER BY id`, projectID)
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
	res, err := t.exec(ctx, `INSERT INTO am_agents (project_id, name, program, model, task_description, inception_us, last_active_us, attachments_policy, contact_policy)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ProjectID, a.Name, a.Program, a.Model, a.TaskDescription, us(a.InceptionAt), us(a.LastActiveAt), a.AttachmentsPolicy, string(a.ContactPolicy))
	if err != nil {
		return err
	}
	a.ID, err = res.LastInsertId()
	return err
}

func (t *tx) UpdateAgent(ctx context.Context, a agentmail.Agent) error {
	_, err := t.exec(ctx, `UPDATE am_agents SET program = ?, model = ?, task_description = ?, attachments_policy = ?, contact_policy = ?,
		last_active_us = max(last_active_us, coalesce(?, 0)) WHERE id = ?`,
		a.Program, a.Model, a.TaskDescription, a.AttachmentsPolicy, string(a.ContactPolicy), us(a.LastActiveAt), a.ID)
	return err
}

func (t *tx) TouchAgent(ctx context.Context, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_agents SET last_active_us = ? WHERE id = ? AND last_active_us < ?`, us(at), agentID, us(at))
	return err
}

func (t *tx) UnreadCounts(ctx context.Context, projectID int64) (map[int64]int, error) {
	rows, err := t.query(ctx, `SELECT r.agent_id, count(*) FROM am_agents a JOIN am_recipients r ON r.agent_id = a.id
		WHERE a.project_id = ? AND r.delivered_us IS NOT NULL AND r.read_us IS NULL GROUP BY r.agent_id`, projectID)
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
