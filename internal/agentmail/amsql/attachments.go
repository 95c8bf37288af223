package amsql

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
)

var (
	insertAttachment = define(`INSERT INTO am_attachments (message_id, seq, path, media_type, size, sha256, data)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`)
	// Without data the column reads as NULL, so the blobs stay in the
	// database.
	attachmentsOf = defineFor(func(d *Dialect) string {
		return `SELECT id, message_id, seq, path, media_type, size, sha256, CASE WHEN ? THEN data END
		FROM am_attachments WHERE ` + d.InIDs("message_id", "?") + ` ORDER BY message_id, seq`
	})
	agentHolder    = define(`SELECT agent_id, session, token_hash, bound_us FROM am_agent_holders WHERE agent_id = ?`)
	setAgentHolder = define(`INSERT INTO am_agent_holders (agent_id, session, token_hash, bound_us) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id) DO UPDATE SET session = excluded.session, token_hash = excluded.token_hash, bound_us = excluded.bound_us`)
)

// InsertAttachments implements agentmail.AttachmentTx.
func (t *Tx) InsertAttachments(ctx context.Context, messageID int64, as []agentmail.Attachment) error {
	for i := range as {
		a := &as[i]
		if err := t.insertID(ctx, &a.ID, insertAttachment, messageID, a.Seq, a.Path, a.MediaType, a.Size, a.SHA256, a.Data); err != nil {
			return err
		}
		a.MessageID = messageID
	}
	return nil
}

// AttachmentsOf implements agentmail.AttachmentTx.
func (t *Tx) AttachmentsOf(ctx context.Context, messageIDs []int64, withData bool) (map[int64][]agentmail.Attachment, error) {
	out := map[int64][]agentmail.Attachment{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	rows, err := t.query(ctx, attachmentsOf, withData, t.sql.d.IDs(messageIDs))
	if err != nil {
		return nil, err
	}
	as, err := Collect(rows, func(row Row) (a agentmail.Attachment, err error) {
		err = row.Scan(&a.ID, &a.MessageID, &a.Seq, &a.Path, &a.MediaType, &a.Size, &a.SHA256, &a.Data)
		return a, err
	})
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		out[a.MessageID] = append(out[a.MessageID], a)
	}
	return out, nil
}

// AgentHolder implements agentmail.HoldersTx.
func (t *Tx) AgentHolder(ctx context.Context, agentID int64) (agentmail.AgentHolder, error) {
	var h agentmail.AgentHolder
	if err := t.queryRow(ctx, agentHolder, agentID).Scan(&h.AgentID, &h.Session, &h.TokenHash, Time(&h.BoundAt)); err != nil {
		return agentmail.AgentHolder{}, NotFound(err)
	}
	return h, nil
}

// SetAgentHolder implements agentmail.HoldersTx.
func (t *Tx) SetAgentHolder(ctx context.Context, h agentmail.AgentHolder) error {
	_, err := t.exec(ctx, setAgentHolder, h.AgentID, h.Session, h.TokenHash, US(h.BoundAt))
	return err
}
