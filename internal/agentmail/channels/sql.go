package channels

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
)

// The set's tables, am_ch_* (migration 0002_compat.sql of both engines),
// in SQL written once for both: the engine hands its transaction over with
// a amsql.Querier that runs these statements in it, rebinding the
// placeholders on PostgreSQL.

// SQLStore is the set's storage port on an engine (an amsql.Runner: both
// engines' stores are, and amstore hands them over), its tables reached by
// the SQL of this file.
func SQLStore(r amsql.Runner) Store { return amsql.NewPort(r, On) }

// On is the set's transaction on tx, one transaction of an engine's store,
// whose statements q runs.
func On(tx agentmail.Tx, q amsql.Querier) Tx { return sqlTx{tx, q} }

// sqlTx is the core's transaction with the set's tables.
type sqlTx struct {
	agentmail.Tx
	q amsql.Querier
}

const agentCols = `uuid, project_id, agent_id, name, role, registered_us, heartbeat_us, stale_us`

func scanAgent(row amsql.Row) (Agent, error) {
	var a Agent
	var reg, hb, stale sql.NullInt64
	if err := row.Scan(&a.UUID, &a.ProjectID, &a.AgentID, &a.Name, &a.Role, &reg, &hb, &stale); err != nil {
		return Agent{}, amsql.NotFound(err)
	}
	a.RegisteredAt, a.HeartbeatAt, a.StaleAt = amsql.FromUS(reg), amsql.FromUS(hb), amsql.FromUS(stale)
	return a, nil
}

func (t sqlTx) InsertChannelAgent(ctx context.Context, a Agent) error {
	_, err := t.q.Exec(ctx, `INSERT INTO am_ch_agents (uuid, project_id, agent_id, name, role, registered_us, heartbeat_us) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.UUID, a.ProjectID, a.AgentID, a.Name, a.Role, amsql.US(a.RegisteredAt), amsql.US(a.HeartbeatAt))
	return err
}

func (t sqlTx) ChannelAgent(ctx context.Context, uuid string) (Agent, error) {
	return scanAgent(t.q.QueryRow(ctx, `SELECT `+agentCols+` FROM am_ch_agents WHERE uuid = ?`, uuid))
}

func (t sqlTx) CoreAgentLive(ctx context.Context, agentID int64) (bool, error) {
	var ok bool
	err := t.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM am_ch_agents WHERE agent_id = ? AND stale_us IS NULL)`, agentID).Scan(&ok)
	return ok, err
}

func (t sqlTx) SetHeartbeat(ctx context.Context, uuid string, at time.Time) error {
	_, err := t.q.Exec(ctx, `UPDATE am_ch_agents SET heartbeat_us = ? WHERE uuid = ?`, amsql.US(at), uuid)
	return err
}

func (t sqlTx) StaleChannelAgents(ctx context.Context, projectID int64, cutoff time.Time) ([]Agent, error) {
	rows, err := t.q.Query(ctx, `SELECT `+agentCols+` FROM am_ch_agents
		WHERE project_id = ? AND stale_us IS NULL AND heartbeat_us < ? ORDER BY heartbeat_us, uuid`, projectID, amsql.US(cutoff))
	if err != nil {
		return nil, err
	}
	return amsql.Collect(rows, scanAgent)
}

// MarkChannelAgentStale sets stale_us once. Two servers sweeping at once
// both read the agent as live; on SQLite their write transactions run one
// after the other, so the second finds it marked; on PostgreSQL
// (SERIALIZABLE) only one of them commits its mark, and the other runs
// again and no longer finds the agent live.
func (t sqlTx) MarkChannelAgentStale(ctx context.Context, uuid string, at time.Time) (bool, error) {
	res, err := t.q.Exec(ctx, `UPDATE am_ch_agents SET stale_us = ? WHERE uuid = ? AND stale_us IS NULL`, amsql.US(at), uuid)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (t sqlTx) InsertChannelSender(ctx context.Context, messageID int64, uuid string) error {
	_, err := t.q.Exec(ctx, `INSERT INTO am_ch_senders (message_id, sender_uuid) VALUES (?, ?)`, messageID, uuid)
	return err
}

// ChannelMessages reads one channel's thread, or the thread range
// ['channel.', 'channel/') — every channel — through am_messages_thread
// (on PostgreSQL thread_id compares bytewise, in the "C" collation).
func (t sqlTx) ChannelMessages(ctx context.Context, projectID int64, channel string, since time.Time) ([]Message, error) {
	const q = `SELECT m.id, COALESCE(s.sender_uuid, a.name), m.thread_id, m.subject, m.body_md, m.created_us
		FROM am_messages m JOIN am_agents a ON a.id = m.sender_id LEFT JOIN am_ch_senders s ON s.message_id = m.id
		WHERE m.project_id = ? AND m.created_us > ? AND `
	var rows *sql.Rows
	var err error
	if channel != "" {
		rows, err = t.q.Query(ctx, q+`m.thread_id = ? ORDER BY m.id`, projectID, amsql.After(since), ThreadPrefix+channel)
	} else {
		lo := ThreadPrefix
		hi := lo[:len(lo)-1] + string(lo[len(lo)-1]+1) // "channel/": the first string past the prefix
		rows, err = t.q.Query(ctx, q+`m.thread_id >= ? AND m.thread_id < ? ORDER BY m.id`, projectID, amsql.After(since), lo, hi)
	}
	if err != nil {
		return nil, err
	}
	return amsql.Collect(rows, func(row amsql.Row) (Message, error) {
		var m Message
		var thread string
		err := row.Scan(&m.ID, &m.SenderID, &thread, &m.Subject, &m.Body, amsql.Time(&m.CreatedAt))
		m.Channel = strings.TrimPrefix(thread, ThreadPrefix)
		return m, err
	})
}

func (t sqlTx) InsertChange(ctx context.Context, c *Change) error {
	return t.q.QueryRow(ctx, `INSERT INTO am_ch_changes (project_id, agent_uuid, file_path, summary, announced_us) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		c.ProjectID, c.AgentUUID, c.FilePath, c.Summary, amsql.US(c.AnnouncedAt)).Scan(&c.ID)
}

func (t sqlTx) Changes(ctx context.Context, projectID int64, since time.Time, uuid string) ([]Change, error) {
	// ?3 twice: "anyone" or this agent. The CAST gives PostgreSQL the
	// parameter's type, which a bare comparison with '' leaves unknown.
	rows, err := t.q.Query(ctx, `SELECT id, project_id, agent_uuid, file_path, summary, announced_us FROM am_ch_changes
		WHERE project_id = ?1 AND announced_us > ?2 AND (CAST(?3 AS TEXT) = '' OR agent_uuid = ?3) ORDER BY id`, projectID, amsql.After(since), uuid)
	if err != nil {
		return nil, err
	}
	return amsql.Collect(rows, func(row amsql.Row) (Change, error) {
		var c Change
		err := row.Scan(&c.ID, &c.ProjectID, &c.AgentUUID, &c.FilePath, &c.Summary, amsql.Time(&c.AnnouncedAt))
		return c, err
	})
}
