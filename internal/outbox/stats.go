package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

// SinkStat is one sink's backlog in the outbox.
type SinkStat struct {
	Sink  string
	Depth int
	// Oldest is when the oldest message still waiting was written (zero
	// when none waits).
	Oldest time.Time
}

// Stats reads every registered sink's backlog, for the metrics. Besides
// the trigger and the backfill, this is the one place the outbox reads an
// agent-mail table: a message's created_us, which gives the lag. The
// outbox tables may not exist (a store that never served agent mail):
// then there is nothing to report.
func Stats(ctx context.Context, db *store.DB) ([]SinkStat, error) {
	rows, err := db.QueryContext(ctx, `SELECT s.name, count(o.message_id), min(m.created_us)
		FROM am_mirror_sinks s
		LEFT JOIN am_mirror_outbox o ON o.sink = s.name
		LEFT JOIN am_messages m ON m.id = o.message_id
		GROUP BY s.name ORDER BY s.name`)
	if err != nil {
		return nil, fmt.Errorf("reading the mirror outbox: %w", err)
	}
	out, err := store.Collect(rows, func(row store.Scanner) (SinkStat, error) {
		var st SinkStat
		var oldest sql.NullInt64
		err := row.Scan(&st.Sink, &st.Depth, &oldest)
		if oldest.Valid {
			st.Oldest = time.UnixMicro(oldest.Int64)
		}
		return st, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the mirror outbox: %w", err)
	}
	return out, nil
}
