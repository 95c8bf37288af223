package postgres

import (
	"context"
	"sort"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
	"github.com/mailgate/mailgate/internal/store"
)

// The statements of this file are PostgreSQL's own; the others live in amsql.

// InsertMessage writes the message and all its copies in one statement (one
// round trip per send, where SQLite, with no round trips and no
// data-modifying WITH, runs one per copy): the recipients' columns travel
// as parallel arrays, and their order of address is the array order.
func (t *tx) InsertMessage(ctx context.Context, m *agentmail.Message) error {
	n := len(m.Recipients)
	agents, kinds := make([]int64, n), make([]string, n)
	delivered, held := make([]*int64, n), make([]*string, n)
	for i, r := range m.Recipients {
		agents[i], kinds[i] = r.AgentID, r.Kind
		if !r.DeliveredAt.IsZero() {
			d := r.DeliveredAt.UnixMicro()
			delivered[i] = &d
		}
		if r.HeldReason != "" {
			h := r.HeldReason
			held[i] = &h
		}
	}
	id, err := t.insertID(ctx, `WITH m AS (
			INSERT INTO am_messages (project_id, sender_id, thread_id, subject, body_md, importance, ack_required, created_us, reply_to)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
		), r AS (
			INSERT INTO am_recipients (message_id, agent_id, ord, kind, delivered_us, held_reason)
			SELECT m.id, c.agent_id, c.ord - 1, c.kind, c.delivered_us, c.held_reason
			FROM m, unnest($10::bigint[], $11::text[], $12::bigint[], $13::text[]) WITH ORDINALITY AS c(agent_id, kind, delivered_us, held_reason, ord)
		)
		SELECT id FROM m`,
		m.ProjectID, m.SenderID, amsql.NullStr(m.ThreadID), m.Subject, m.BodyMD, string(m.Importance), store.Flag(m.AckRequired), amsql.US(m.CreatedAt), amsql.NullID(m.ReplyTo),
		agents, kinds, delivered, held)
	if err != nil {
		return err
	}
	m.ID = id
	t.inserts++
	for i := range m.Recipients {
		m.Recipients[i].MessageID = id
	}
	return nil
}

// searchTS is Search's statement, without and with the viewer's
// condition, rebound once (on first use).
var searchTS = sync.OnceValue(func() [2]string {
	return [2]string{store.RebindPostgres(searchSQL("")), store.RebindPostgres(searchSQL(amsql.Viewer("?", "?")))}
})

// searchSQL reads the newest matches of a tsquery ($2) with their rank.
// querytree is 'T' when a branch of the query holds exclusions only (its
// terms all dropped by the parser): such a query would read every message,
// and FTS5 matches nothing for it.
func searchSQL(viewer string) string {
	return `SELECT ` + amsql.MsgCols + `, ts_rank_cd(m.fts, q.q)::float8
		FROM to_tsquery('pg_catalog.simple', ?) AS q(q)
		JOIN am_messages m ON m.fts @@ q.q
		JOIN am_agents a ON a.id = m.sender_id
		WHERE m.project_id = ? AND querytree(q.q) <> 'T'` + viewer + ` ORDER BY m.id DESC LIMIT ?`
}

// Search runs q.Match, rendered as a tsquery (see Tsquery), against the
// GIN index on am_messages.fts. One statement serves both halves of the
// contract: it returns the newest Window matches with bodies and their
// ts_rank_cd; when fewer matched, that is every match, and they are ranked
// here (best first, older first among equals, as SQLite's ORDER BY rank,
// id) without bodies.
func (t *tx) Search(ctx context.Context, q agentmail.SearchQuery) ([]agentmail.Message, bool, error) {
	if q.Match == nil {
		ms, err := t.SearchLike(ctx, q)
		return ms, false, err
	}
	tsq := Tsquery(q.Match)
	if tsq == "" {
		return nil, true, nil // nothing searchable survived: no match
	}
	// Planned for its own arguments each time (pgx's unnamed statement, one
	// round trip as the prepared one): the best plan depends on the word. A
	// prepared statement soon gets PostgreSQL's generic plan, made for no
	// word in particular, which walks the project's newest messages
	// whatever the word, so a rare word read the whole project (2-8 ms at
	// 2,000 messages where the GIN index answers in 0.2 ms).
	query, args := searchTS()[0], []any{pgx.QueryExecModeExec, true, tsq, q.ProjectID, q.Window}
	if q.ViewerID != 0 {
		query, args = searchTS()[1], []any{pgx.QueryExecModeExec, true, tsq, q.ProjectID, q.ViewerID, q.ViewerID, q.Window}
	}
	type hit struct {
		m    agentmail.Message
		rank float64
	}
	var hits []hit
	search := func() error {
		rows, err := t.query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h hit
			if h.m, err = amsql.ScanMessage(rows, &h.rank); err != nil {
				return err
			}
			hits = append(hits, h)
		}
		return t.note(rows.Err())
	}
	var err error
	if t.unguarded {
		if err = search(); err != nil {
			t.searchFailed = true
		}
	} else {
		err = t.savepoint(ctx, search)
	}
	if err != nil {
		return nil, false, err
	}
	ms := make([]agentmail.Message, len(hits))
	if len(hits) >= q.Window {
		for i, h := range hits {
			ms[i] = h.m
		}
		return ms, false, nil
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank > hits[j].rank
		}
		return hits[i].m.ID < hits[j].m.ID
	})
	if q.Limit >= 0 && len(ms) > q.Limit {
		ms = ms[:q.Limit]
	}
	for i := range ms {
		ms[i] = hits[i].m
		ms[i].BodyMD = "" // as on SQLite: ranked results come without bodies
	}
	return ms, true, nil
}

// savepoint runs fn inside a savepoint, so that when its statement fails the
// transaction stays usable: the Service answers a refused full-text query
// with a LIKE search in the same transaction, which on PostgreSQL would
// otherwise fail as "current transaction is aborted".
func (t *tx) savepoint(ctx context.Context, fn func() error) error {
	if _, err := t.tx.ExecContext(ctx, `SAVEPOINT am_search`); err != nil {
		return err
	}
	before := t.failed
	if err := fn(); err != nil {
		if _, rerr := t.tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT am_search`); rerr != nil {
			return t.note(rerr)
		}
		t.failed = before // the transaction is usable again
		return err
	}
	_, err := t.tx.ExecContext(ctx, `RELEASE SAVEPOINT am_search`)
	return err
}
