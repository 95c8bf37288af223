package postgres

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// The channels set's store methods (migration 0002_compat.sql).

const chAgentCols = `uuid, project_id, agent_id, name, role, registered_us, heartbeat_us, stale_us`

func scanChAgent(row scanner) (agentmail.ChAgent, error) {
	var a agentmail.ChAgent
	var reg, hb, stale sql.NullInt64
	if err := row.Scan(&a.UUID, &a.ProjectID, &a.AgentID, &a.Name, &a.Role, &reg, &hb, &stale); err != nil {
		return agentmail.ChAgent{}, notFound(err)
	}
	a.RegisteredAt, a.HeartbeatAt, a.StaleAt = fromUS(reg), fromUS(hb), fromUS(stale)
	return a, nil
}

func (t *tx) InsertChAgent(ctx context.Context, a agentmail.ChAgent) error {
	_, err := t.exec(ctx, `INSERT INTO am_ch_agents (uuid, project_id, agent_id, name, role, registered_us, heartbeat_us) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		a.UUID, a.ProjectID, a.AgentID, a.Name, a.Role, us(a.RegisteredAt), us(a.HeartbeatAt))
	return err
}

func (t *tx) ChAgent(ctx context.Context, uuid string) (agentmail.ChAgent, error) {
	return scanChAgent(t.queryRow(ctx, `SELECT `+chAgentCols+` FROM am_ch_agents WHERE uuid = $1`, uuid))
}

func (t *tx) CoreAgentLive(ctx context.Context, agentID int64) (bool, error) {
	var ok bool
	err := t.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM am_ch_agents WHERE agent_id = $1 AND stale_us IS NULL)`, agentID).Scan(&ok)
	return ok, err
}

func (t *tx) SetChHeartbeat(ctx context.Context, uuid string, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE am_ch_agents SET heartbeat_us = $1 WHERE uuid = $2`, us(at), uuid)
	return err
}

func (t *tx) StaleChAgents(ctx context.Context, projectID int64, cutoff time.Time) ([]agentmail.ChAgent, error) {
	rows, err := t.query(ctx, `SELECT `+chAgentCols+` FROM am_ch_agents
		WHERE project_id = $1 AND stale_us IS NULL AND heartbeat_us < $2 ORDER BY heartbeat_us, uuid`, projectID, us(cutoff))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.ChAgent
	for rows.Next() {
		a, err := scanChAgent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// MarkChAgentStale sets stale_us once. Two servers sweeping at once both
// read the agent as live, but under SERIALIZABLE only one of them commits
// its mark; the other runs again and no longer finds the agent live.
func (t *tx) MarkChAgentStale(ctx context.Context, uuid string, at time.Time) (bool, error) {
	res, err := t.exec(ctx, `UPDATE am_ch_agents SET stale_us = $1 WHERE uuid = $2 AND stale_us IS NULL`, us(at), uuid)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t *tx) InsertChSender(ctx context.Context, messageID int64, uuid string) error {
	_, err := t.exec(ctx, `INSERT INTO am_ch_senders (message_id, sender_uuid) VALUES ($1, $2)`, messageID, uuid)
	return err
}

// ChMessages reads one channel's thread, or the thread range
// ['channel.', 'channel/') — every channel — through am_messages_thread
// (thread_id compares bytewise, in the "C" collation).
func (t *tx) ChMessages(ctx context.Context, projectID int64, channel string, since time.Time) ([]agentmail.ChMessage, error) {
	var sinceUS int64 = -1
	if !since.IsZero() {
		sinceUS = since.UnixMicro()
	}
	const q = `SELECT m.id, COALESCE(s.sender_uuid, a.name), m.thread_id, m.subject, m.body_md, m.created_us
		FROM am_messages m JOIN am_agents a ON a.id = m.sender_id LEFT JOIN am_ch_senders s ON s.message_id = m.id
		WHERE m.project_id = $1 AND m.created_us > $2 AND `
	var rows *sql.Rows
	var err error
	if channel != "" {
		rows, err = t.query(ctx, q+`m.thread_id = $3 ORDER BY m.id`, projectID, sinceUS, agentmail.ChannelThreadPrefix+channel)
	} else {
		lo := agentmail.ChannelThreadPrefix
		hi := lo[:len(lo)-1] + string(lo[len(lo)-1]+1) // "channel/": the first string past the prefix
		rows, err = t.query(ctx, q+`m.thread_id >= $3 AND m.thread_id < $4 ORDER BY m.id`, projectID, sinceUS, lo, hi)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.ChMessage
	for rows.Next() {
		var m agentmail.ChMessage
		var created int64
		var thread string
		if err := rows.Scan(&m.ID, &m.SenderID, &thread, &m.Subject, &m.Body, &created); err != nil {
			return nil, err
		}
		m.Channel, m.CreatedAt = strings.TrimPrefix(thread, agentmail.ChannelThreadPrefix), time.UnixMicro(created).UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

func (t *tx) InsertChange(ctx context.Context, c *agentmail.ChChange) error {
	id, err := t.insertID(ctx, `INSERT INTO am_ch_changes (project_id, agent_uuid, file_path, summary, announced_us) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		c.ProjectID, c.AgentUUID, c.FilePath, c.Summary, us(c.AnnouncedAt))
	if err != nil {
		return err
	}
	c.ID = id
	return nil
}

func (t *tx) Changes(ctx context.Context, projectID int64, since time.Time, uuid string) ([]agentmail.ChChange, error) {
	var sinceUS int64 = -1
	if !since.IsZero() {
		sinceUS = since.UnixMicro()
	}
	rows, err := t.query(ctx, `SELECT id, project_id, agent_uuid, file_path, summary, announced_us FROM am_ch_changes
		WHERE project_id = $1 AND announced_us > $2 AND ($3::text = '' OR agent_uuid = $3) ORDER BY id`, projectID, sinceUS, uuid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []agentmail.ChChange
	for rows.Next() {
		var c agentmail.ChChange
		var at int64
		if err := rows.Scan(&c.ID, &c.ProjectID, &c.AgentUUID, &c.FilePath, &c.Summary, &at); err != nil {
			return nil, err
		}
		c.AnnouncedAt = time.UnixMicro(at).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}
