package postgres

import (
	"context"
	"database/sql"
	"strings"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
)

var _ agentmail.RecipientTx = (*tx)(nil)

// linkCols are a contact link's columns as LinkPair reads them, of the
// link aliased l.
const linkCols = `l.id, l.status, l.reason, l.created_us, l.updated_us, l.expires_us`

// agentWithLinksSQL is AgentByName's statement with the links between the
// agent and the sender ($3) joined: from the sender (f) and back (b). The
// name condition is the dialect's AgentName on the alias, so that it
// probes the unique index am_agents_name as AgentByName does.
var agentWithLinksSQL = `SELECT a.` + strings.ReplaceAll(amsql.AgentCols, ", ", ", a.") + `, ` +
	strings.ReplaceAll(linkCols, "l.", "f.") + `, ` + strings.ReplaceAll(linkCols, "l.", "b.") + `
	FROM am_agents a
	LEFT JOIN am_contacts f ON f.from_agent_id = $3 AND f.to_agent_id = a.id
	LEFT JOIN am_contacts b ON b.from_agent_id = a.id AND b.to_agent_id = $3
	WHERE a.project_id = $1 AND lower(a.name) = lower($2::text COLLATE "C")`

// AgentWithLinks implements agentmail.RecipientTx: a send's recipient and
// its links with the sender in one round trip (see agentWithLinksSQL).
func (t *tx) AgentWithLinks(ctx context.Context, projectID int64, name string, sender int64) (agentmail.Agent, agentmail.ContactLink, agentmail.ContactLink, error) {
	var fwd, back agentmail.ContactLink
	var fid, bid sql.NullInt64
	var fstatus, freason, bstatus, breason sql.NullString
	a, err := amsql.ScanAgent(t.queryRow(ctx, agentWithLinksSQL, projectID, name, sender),
		&fid, &fstatus, &freason, amsql.Time(&fwd.CreatedAt), amsql.Time(&fwd.UpdatedAt), amsql.Time(&fwd.ExpiresAt),
		&bid, &bstatus, &breason, amsql.Time(&back.CreatedAt), amsql.Time(&back.UpdatedAt), amsql.Time(&back.ExpiresAt))
	if err != nil {
		return agentmail.Agent{}, agentmail.ContactLink{}, agentmail.ContactLink{}, err
	}
	if fid.Valid {
		fwd.ID, fwd.FromAgentID, fwd.ToAgentID, fwd.Status, fwd.Reason = fid.Int64, sender, a.ID, fstatus.String, freason.String
	} else {
		fwd = agentmail.ContactLink{}
	}
	if bid.Valid {
		back.ID, back.FromAgentID, back.ToAgentID, back.Status, back.Reason = bid.Int64, a.ID, sender, bstatus.String, breason.String
	} else {
		back = agentmail.ContactLink{}
	}
	return a, fwd, back, nil
}
