// Package schedule keeps the approved emails that are to be sent later
// (send_at, issue 27 item 7) in the state store, so that whichever mailgate
// server runs at their time sends each exactly once: SQLite or PostgreSQL,
// one process or many. It is the store's side of internal/gate's Later and
// Scheduler; the gate decides what is kept and how it is sent.
package schedule

import (
	"context"
	"database/sql"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

// Store is the schedule in the state store.
type Store struct{ db *store.DB }

var (
	_ gate.Scheduler  = (*Store)(nil)
	_ gate.LaterStore = (*Store)(nil)
)

// New migrates db (the scheduled_sends table) and returns the schedule.
func New(ctx context.Context, db *store.DB) (*Store, error) {
	if err := db.MigrateDialect(ctx, "schedule", migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return &Store{db: db}, nil
}

// Schedule keeps e (a Done file's name can be scheduled once).
func (s *Store) Schedule(ctx context.Context, e gate.ScheduledEmail) error {
	req, err := json.Marshal(e.Final)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	now := time.Now().UnixMilli()
	return s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO scheduled_sends
			(done_name, send_at_ms, state, request, content_sha, tool, raw, thread_id, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			e.DoneName, e.SendAt.UnixMilli(), gate.LaterScheduled, string(req), e.ContentSHA256, e.Tool,
			base64.StdEncoding.EncodeToString(e.Raw), e.ThreadID, now)
		return err
	})
}

// Due lists the emails still scheduled at or before now, oldest first.
func (s *Store) Due(ctx context.Context, now time.Time) ([]gate.ScheduledEmail, error) {
	return s.list(ctx, `WHERE state = ? AND send_at_ms <= ? ORDER BY send_at_ms, done_name`, gate.LaterScheduled, now.UnixMilli())
}

// Entry is one scheduled email as `mailgate approvals` lists it.
type Entry struct {
	gate.ScheduledEmail
	State, Detail, TakenBy string
	Updated                time.Time
}

// Pending lists the emails still waiting for their time (and those being
// sent right now), soonest first.
func (s *Store) Pending(ctx context.Context) ([]Entry, error) {
	return s.entries(ctx, `WHERE state IN (?, ?) ORDER BY send_at_ms, done_name`, gate.LaterScheduled, gate.LaterSending)
}

func (s *Store) list(ctx context.Context, where string, args ...any) ([]gate.ScheduledEmail, error) {
	es, err := s.entries(ctx, where, args...)
	out := make([]gate.ScheduledEmail, len(es))
	for i, e := range es {
		out[i] = e.ScheduledEmail
	}
	return out, err
}

func (s *Store) entries(ctx context.Context, where string, args ...any) ([]Entry, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT done_name, send_at_ms, state, request, content_sha, tool, raw, thread_id, taken_by, detail, updated_ms
		FROM scheduled_sends `+where), args...)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return store.Collect(rows, scanEntry)
}

func scanEntry(row store.Scanner) (Entry, error) {
	var e Entry
	var at, updated int64
	var req, raw string
	if err := row.Scan(&e.DoneName, &at, &e.State, &req, &e.ContentSHA256, &e.Tool, &raw, &e.ThreadID, &e.TakenBy, &e.Detail, &updated); err != nil {
		return Entry{}, fmt.Errorf("schedule: %w", err)
	}
	e.SendAt, e.Updated = time.UnixMilli(at).UTC(), time.UnixMilli(updated).UTC()
	if err := json.Unmarshal([]byte(req), &e.Final); err != nil {
		return Entry{}, fmt.Errorf("schedule: %s: %w", e.DoneName, err)
	}
	var err error
	if e.Raw, err = base64.StdEncoding.DecodeString(raw); err != nil {
		return Entry{}, fmt.Errorf("schedule: %s: %w", e.DoneName, err)
	}
	return e, nil
}

// Take moves a scheduled email to state (sending, expired or cancelled) for
// owner: true for exactly one caller, whatever the process or host (one
// conditional update in a write transaction: immediate on SQLite,
// serializable on PostgreSQL).
func (s *Store) Take(ctx context.Context, doneName, state, owner string, now time.Time) (bool, error) {
	var won bool
	err := s.db.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE scheduled_sends SET state = ?, taken_by = ?, taken_ms = ?, updated_ms = ?
			WHERE done_name = ? AND state = ?`), state, owner, now.UnixMilli(), now.UnixMilli(), doneName, gate.LaterScheduled)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		won = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("schedule: taking %s: %w", doneName, err)
	}
	return won, nil
}

// Untake puts an email taken for sending back on the schedule.
func (s *Store) Untake(ctx context.Context, doneName string) error {
	return s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE scheduled_sends SET state = ?, taken_by = '', taken_ms = 0 WHERE done_name = ? AND state = ?`),
			gate.LaterScheduled, doneName, gate.LaterSending)
		return err
	})
}

// Finish records the outcome of a taken email.
func (s *Store) Finish(ctx context.Context, doneName, state, detail string, now time.Time) error {
	return s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE scheduled_sends SET state = ?, detail = ?, updated_ms = ? WHERE done_name = ?`),
			state, detail, now.UnixMilli(), doneName)
		return err
	})
}

// ErrNotFound: no scheduled email by that name is waiting.
var ErrNotFound = errors.New("no scheduled email waiting by that name")

// Cancel withdraws the email of Done file doneName before it is sent: the
// store's schedule first (so no server can take it any more; one being sent
// this moment is not cancelled), then the file moves to Rejected/ with the
// reason. It returns the name in Rejected/.
func (s *Store) Cancel(ctx context.Context, v *approval.Vault, doneName, owner string, now time.Time) (string, error) {
	won, err := s.Take(ctx, doneName, gate.LaterCancelled, owner, now)
	if err != nil {
		return "", err
	}
	if !won {
		return "", fmt.Errorf("cancelling %s: %w (it may be being sent, or already sent or withdrawn)", doneName, ErrNotFound)
	}
	name, err := v.Unschedule(doneName, "withdrawn with mailgate approvals cancel before its send time")
	if err != nil {
		return "", fmt.Errorf("cancelling %s: the email will not be sent, but its file could not be moved: %w", doneName, err)
	}
	return name, nil
}
