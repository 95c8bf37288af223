package sqlite

import (
	"context"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// InsertAttachments stores a message's attachments (0006_imports_attachments.sql).
func (t *tx) InsertAttachments(ctx context.Context, messageID int64, as []agentmail.Attachment) error {
	for i := range as {
		a := &as[i]
		res, err := t.exec(ctx, `INSERT INTO am_attachments (message_id, seq, path, media_type, size, sha256, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			messageID, a.Seq, a.Path, a.MediaType, a.Size, a.SHA256, a.Data)
		if err != nil {
			return err
		}
		if a.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		a.MessageID = messageID
	}
	return nil
}

// AttachmentsOf returns the attachments of messages, in seq order.
func (t *tx) AttachmentsOf(ctx context.Context, messageIDs []int64, withData bool) (map[int64][]agentmail.Attachment, error) {
	out := map[int64][]agentmail.Attachment{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	rows, err := t.query(ctx, `SELECT id, message_id, seq, path, media_type, size, sha256, CASE WHEN ? THEN data ELSE x'' END
		FROM am_attachments WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY message_id, seq`, withData, jsonIDs(messageIDs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a agentmail.Attachment
		if err := rows.Scan(&a.ID, &a.MessageID, &a.Seq, &a.Path, &a.MediaType, &a.Size, &a.SHA256, &a.Data); err != nil {
			return nil, err
		}
		if !withData {
			a.Data = nil
		}
		out[a.MessageID] = append(out[a.MessageID], a)
	}
	return out, rows.Err()
}
