package amsql

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store"
)

const projectCols = `id, slug, human_key, created_us`

func scanProject(row Row) (agentmail.Project, error) {
	var p agentmail.Project
	if err := row.Scan(&p.ID, &p.Slug, &p.HumanKey, Time(&p.CreatedAt)); err != nil {
		return agentmail.Project{}, NotFound(err)
	}
	return p, nil
}

var (
	projectByID       = define(`SELECT ` + projectCols + ` FROM am_projects WHERE id = ?`)
	projectBySlug     = define(`SELECT ` + projectCols + ` FROM am_projects WHERE slug = ?`)
	projectByHumanKey = define(`SELECT ` + projectCols + ` FROM am_projects WHERE human_key = ?`)
	insertProject     = define(`INSERT INTO am_projects (slug, human_key, created_us) VALUES (?, ?, ?) RETURNING id`)
	allProjects       = define(`SELECT ` + projectCols + ` FROM am_projects ORDER BY id`)
)

func (t *Tx) ProjectByID(ctx context.Context, id int64) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, projectByID, id))
}

func (t *Tx) ProjectBySlug(ctx context.Context, slug string) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, projectBySlug, slug))
}

func (t *Tx) ProjectByHumanKey(ctx context.Context, humanKey string) (agentmail.Project, error) {
	return scanProject(t.queryRow(ctx, projectByHumanKey, humanKey))
}

func (t *Tx) InsertProject(ctx context.Context, p *agentmail.Project) error {
	return t.insertID(ctx, &p.ID, insertProject, p.Slug, p.HumanKey, US(p.CreatedAt))
}

func (t *Tx) Projects(ctx context.Context) ([]agentmail.Project, error) {
	return all(ctx, t, allProjects, scanProject)
}

// each calls f on every row of rows, stopping at its first error, and
// closes them.
func each(rows *sql.Rows, f func(Row) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Collect scans every row of rows with scan (store.Collect), for the
// shared statements and an engine's own.
func Collect[T any](rows *sql.Rows, scan func(Row) (T, error)) ([]T, error) {
	return store.Collect(rows, scan)
}

// all runs s and returns every row it answers, read by scan.
func all[T any](ctx context.Context, t *Tx, s stmt, scan func(Row) (T, error), args ...any) ([]T, error) {
	rows, err := t.query(ctx, s, args...)
	if err != nil {
		return nil, err
	}
	return Collect(rows, scan)
}

const agentCols = `id, project_id, name, program, model, task_description, inception_us, last_active_us, attachments_policy, contact_policy`

// AgentCols are the columns of am_agents ScanAgent reads, in its order.
const AgentCols = agentCols

func scanAgent(row Row) (agentmail.Agent, error) { return ScanAgent(row) }

// ScanAgent reads an agent's columns (AgentCols), then extra.
func ScanAgent(row Row, extra ...any) (agentmail.Agent, error) {
	var a agentmail.Agent
	var policy string
	dest := append([]any{&a.ID, &a.ProjectID, &a.Name, &a.Program, &a.Model, &a.TaskDescription, Time(&a.InceptionAt), Time(&a.LastActiveAt),
		&a.AttachmentsPolicy, &policy}, extra...)
	if err := row.Scan(dest...); err != nil {
		return agentmail.Agent{}, NotFound(err)
	}
	a.ContactPolicy = agentmail.Policy(policy)
	return a, nil
}

var (
	agentByID   = define(`SELECT ` + agentCols + ` FROM am_agents WHERE id = ?`)
	agentByName = defineFor(func(d *Dialect) string {
		return `SELECT ` + agentCols + ` FROM am_agents WHERE project_id = ? AND ` + d.AgentName
	})
	projectAgents = define(`SELECT ` + agentCols + ` FROM am_agents WHERE project_id = ? ORDER BY id`)
	insertAgent   = define(`INSERT INTO am_agents (project_id, name, program, model, task_description, inception_us, last_active_us, attachments_policy, contact_policy)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	// The cast types the parameter on PostgreSQL (coalesce with 0 would
	// make it a 32-bit integer); SQLite reads it as a no-op.
	updateAgent = defineFor(func(d *Dialect) string {
		return `UPDATE am_agents SET program = ?, model = ?, task_description = ?, attachments_policy = ?, contact_policy = ?,
		last_active_us = ` + d.Greatest + `(last_active_us, coalesce(CAST(? AS BIGINT), 0)) WHERE id = ?`
	})
	touchAgent   = define(`UPDATE am_agents SET last_active_us = ?1 WHERE id = ?2 AND last_active_us < ?1`)
	unreadCounts = define(`SELECT r.agent_id, count(*) FROM am_agents a JOIN am_recipients r ON r.agent_id = a.id
		WHERE a.project_id = ? AND r.delivered_us IS NOT NULL AND r.read_us IS NULL GROUP BY r.agent_id`)
)

func (t *Tx) AgentByID(ctx context.Context, id int64) (agentmail.Agent, error) {
	return scanAgent(t.queryRow(ctx, agentByID, id))
}

func (t *Tx) AgentByName(ctx context.Context, projectID int64, name string) (agentmail.Agent, error) {
	return scanAgent(t.queryRow(ctx, agentByName, projectID, name))
}

func (t *Tx) Agents(ctx context.Context, projectID int64) ([]agentmail.Agent, error) {
	return all(ctx, t, projectAgents, scanAgent, projectID)
}

func (t *Tx) InsertAgent(ctx context.Context, a *agentmail.Agent) error {
	return t.insertID(ctx, &a.ID, insertAgent,
		a.ProjectID, a.Name, a.Program, a.Model, a.TaskDescription, US(a.InceptionAt), US(a.LastActiveAt), a.AttachmentsPolicy, string(a.ContactPolicy))
}

func (t *Tx) UpdateAgent(ctx context.Context, a agentmail.Agent) error {
	_, err := t.exec(ctx, updateAgent,
		a.Program, a.Model, a.TaskDescription, a.AttachmentsPolicy, string(a.ContactPolicy), US(a.LastActiveAt), a.ID)
	return err
}

// TouchAgent moves the agent's last activity forward inside the
// transaction (PostgreSQL's store overrides it: see its TouchAgent).
func (t *Tx) TouchAgent(ctx context.Context, agentID int64, at time.Time) error {
	_, err := t.exec(ctx, touchAgent, US(at), agentID)
	return err
}

// TouchAgentSQL is the statement of TouchAgent, with its parameters (the
// time, the agent's id), for an engine that runs it after the commit.
func (q *Queries) TouchAgentSQL() string { return q.texts[touchAgent] }

func (t *Tx) UnreadCounts(ctx context.Context, projectID int64) (map[int64]int, error) {
	rows, err := t.query(ctx, unreadCounts, projectID)
	if err != nil {
		return nil, err
	}
	out := map[int64]int{}
	err = each(rows, func(row Row) error {
		var id int64
		var n int
		err := row.Scan(&id, &n)
		out[id] = n
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
