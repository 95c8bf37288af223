package archive

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/filelock"
	"github.com/mailgate/mailgate/internal/store"
)

// Besides messages, the archive keeps what the system overview's archive
// layout has next to them:
//
//	<vault>/AgentMail/<project-slug>/agents/<Name>/profile.json
//	<vault>/AgentMail/<project-slug>/file_reservations/<id>.json
//
// Agents and reservations change in place (a profile is updated, a
// reservation renewed and released), so they are not fed by the message
// outbox but by the archive's own tables (migrations/): triggers record
// each change as an event in the transaction that makes it and mark the
// agent's or reservation's file as behind; a worker rewrites each file
// behind from the current state and its events. A file is a function of the
// store, so rewriting it after a crash is harmless.

//go:embed migrations
var migrations embed.FS

// State is what the archive reads for profiles and reservations, through
// agent-mail's exported API (*agentmail.Service implements it).
type State interface {
	AgentByID(ctx context.Context, id int64) (agentmail.Agent, agentmail.Project, error)
	ReservationByID(ctx context.Context, id int64) (agentmail.Reservation, agentmail.Project, error)
}

var _ State = (*agentmail.Service)(nil)

// Profile is agents/<Name>/profile.json: the agent's public identity. The
// registration token (only its hash is stored, elsewhere) and the MCP
// session holding the name are never in it.
type Profile struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	Project           string `json:"project"`
	Program           string `json:"program"`
	Model             string `json:"model"`
	TaskDescription   string `json:"task_description"`
	InceptionTS       string `json:"inception_ts"`
	LastActiveTS      string `json:"last_active_ts"` // as of the last profile change: activity alone does not rewrite the file
	AttachmentsPolicy string `json:"attachments_policy"`
	ContactPolicy     string `json:"contact_policy"`
}

// ReservationFile is file_reservations/<id>.json: the reservation's
// current state and its events, oldest first.
type ReservationFile struct {
	ID          int64              `json:"id"`
	Project     string             `json:"project"`
	Agent       string             `json:"agent"`
	PathPattern string             `json:"path_pattern"`
	Exclusive   bool               `json:"exclusive"`
	Reason      string             `json:"reason"`
	CreatedTS   string             `json:"created_ts"`
	ExpiresTS   string             `json:"expires_ts"`
	ReleasedTS  *string            `json:"released_ts"`
	History     []ReservationEvent `json:"history"`
}

// ReservationEvent is one grant, renewal or release.
type ReservationEvent struct {
	Event     string `json:"event"` // granted, renewed, released
	TS        string `json:"ts"`
	ExpiresTS string `json:"expires_ts"` // the expiry the event left
}

// ts is agent mail's own timestamp form (created_ts in its answers).
func ts(t time.Time) string { return t.UTC().Format(agentmail.TSLayout) }

func usTS(us int64) string { return ts(time.UnixMicro(us)) }

// ProfilePath is where an agent's profile is archived. A name that is not
// already a safe file name (a mailbox name of the compatibility sets may be
// anything) is made one and given the agent's id, so two names that clean
// up alike never share a file.
func (a *Archive) ProfilePath(slug, name string, id int64) string {
	dir := safeName(name)
	if dir != name {
		dir = safeName(name + "-" + strconv.FormatInt(id, 10))
	}
	return filepath.Join(a.projectDir(slug), "agents", dir, "profile.json")
}

// ReservationPath is where reservation id is archived.
func (a *Archive) ReservationPath(slug string, id int64) string {
	return filepath.Join(a.projectDir(slug), "file_reservations", strconv.FormatInt(id, 10)+".json")
}

// jsonFile is v as the archive writes JSON: indented, HTML characters as
// they are, a final newline; the same value always gives the same bytes.
func jsonFile(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeIfChanged writes data to path unless the file already holds it, so
// that a repeat leaves the file (and git) untouched.
func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	return true, writeAtomic(path, data)
}

// stateSync rewrites the profile and reservation files that are behind.
type stateSync struct {
	db      *store.DB
	src     State
	archive *Archive
	written func()
}

// openState migrates the archive's tables and, the first time the archive
// starts on this store, records every agent and reservation already there
// (in the same transaction that switches the triggers on, so none is
// missed or recorded twice).
func openState(ctx context.Context, db *store.DB) error {
	if err := db.MigrateDialect(ctx, "archive", migrations, "migrations"); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	err := db.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO am_archive_state_cursor (name, started_us) VALUES ('state', ?)
			ON CONFLICT DO NOTHING`), time.Now().UnixMicro())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		for _, q := range []string{
			`INSERT INTO am_archive_events (kind, ref_id, event, at_us) SELECT 'agent', id, 'registered', inception_us FROM am_agents ORDER BY id`,
			`INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us)
				SELECT 'reservation', id, 'granted', created_us, expires_us FROM am_reservations ORDER BY id`,
			`INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us)
				SELECT 'reservation', id, 'released', released_us, expires_us FROM am_reservations WHERE released_us IS NOT NULL ORDER BY id`,
			`INSERT INTO am_archive_pending (kind, ref_id, seq) SELECT kind, ref_id, max(seq) FROM am_archive_events GROUP BY kind, ref_id`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("archive: recording existing agents and reservations: %w", err)
	}
	return nil
}

type pendingRow struct {
	kind string
	ref  int64
	seq  int64
}

// syncBatch is how many files one pass of sync rewrites at most.
const syncBatch = 100

// sync rewrites every file behind, batch by batch, until none is left.
func (s *stateSync) sync(ctx context.Context) error {
	for {
		n, err := s.pass(ctx)
		if err != nil || n < syncBatch {
			return err
		}
	}
}

func (s *stateSync) pass(ctx context.Context) (int, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT kind, ref_id, seq FROM am_archive_pending ORDER BY seq LIMIT ?`), syncBatch)
	if err != nil {
		return 0, fmt.Errorf("archive: reading the profiles and reservations to write: %w", err)
	}
	var todo []pendingRow
	for rows.Next() {
		var p pendingRow
		if err := rows.Scan(&p.kind, &p.ref, &p.seq); err != nil {
			rows.Close()
			return 0, err
		}
		todo = append(todo, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// One file failing does not hold up the others; it stays queued.
	var first error
	for _, p := range todo {
		if err := s.one(ctx, p); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return 0, first
	}
	return len(todo), nil
}

// one rewrites p's file from the state read after p's seq was, and then
// takes p off the queue unless a newer change came meanwhile. The file
// lock keeps two processes from writing an older state over a newer one:
// each reads the state under it.
func (s *stateSync) one(ctx context.Context, p pendingRow) error {
	unlock, err := filelock.Lock(filepath.Join(s.archive.Root, "AgentMail", "state.lock"))
	if err != nil {
		return err
	}
	changed, err := s.write(ctx, p)
	unlock()
	if err != nil && !neverWritable(err) { // a name no file system takes is given up, not retried forever
		return fmt.Errorf("archive: writing %s %d: %w", p.kind, p.ref, err)
	}
	if changed && s.written != nil {
		s.written()
	}
	return s.db.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM am_archive_pending WHERE kind = ? AND ref_id = ? AND seq = ?`), p.kind, p.ref, p.seq)
		return err
	})
}

func (s *stateSync) write(ctx context.Context, p pendingRow) (bool, error) {
	var path string
	var data []byte
	var err error
	switch p.kind {
	case "agent":
		path, data, err = s.profile(ctx, p.ref)
	case "reservation":
		path, data, err = s.reservation(ctx, p.ref)
	default:
		return false, nil // a kind a newer mailgate records: its own archive writes it
	}
	if errors.Is(err, agentmail.ErrNotFound) { // gone from the store: nothing to write
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return writeIfChanged(path, data)
}

// profile is the file of agent id: its path and its contents.
func (s *stateSync) profile(ctx context.Context, id int64) (string, []byte, error) {
	ag, pr, err := s.src.AgentByID(ctx, id)
	if err != nil {
		return "", nil, err
	}
	data, err := jsonFile(Profile{ID: ag.ID, Name: ag.Name, Project: pr.Slug, Program: ag.Program, Model: ag.Model,
		TaskDescription: ag.TaskDescription, InceptionTS: ts(ag.InceptionAt), LastActiveTS: ts(ag.LastActiveAt),
		AttachmentsPolicy: ag.AttachmentsPolicy, ContactPolicy: string(ag.ContactPolicy)})
	return s.archive.ProfilePath(pr.Slug, ag.Name, ag.ID), data, err
}

// reservation is the file of reservation id, with its history: its path
// and its contents.
func (s *stateSync) reservation(ctx context.Context, id int64) (string, []byte, error) {
	r, pr, err := s.src.ReservationByID(ctx, id)
	if err != nil {
		return "", nil, err
	}
	f := ReservationFile{ID: r.ID, Project: pr.Slug, Agent: r.AgentName, PathPattern: r.PathPattern, Exclusive: r.Exclusive,
		Reason: r.Reason, CreatedTS: ts(r.CreatedAt), ExpiresTS: ts(r.ExpiresAt), History: []ReservationEvent{}}
	if !r.ReleasedAt.IsZero() {
		rel := ts(r.ReleasedAt)
		f.ReleasedTS = &rel
	}
	if f.History, err = s.history(ctx, r.ID); err != nil {
		return "", nil, err
	}
	data, err := jsonFile(f)
	return s.archive.ReservationPath(pr.Slug, r.ID), data, err
}

func (s *stateSync) history(ctx context.Context, id int64) ([]ReservationEvent, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(`SELECT event, at_us, expires_us FROM am_archive_events
		WHERE kind = 'reservation' AND ref_id = ? ORDER BY seq`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ReservationEvent{}
	for rows.Next() {
		var e ReservationEvent
		var at int64
		var exp sql.NullInt64
		if err := rows.Scan(&e.Event, &at, &exp); err != nil {
			return nil, err
		}
		e.TS = usTS(at)
		if exp.Valid {
			e.ExpiresTS = usTS(exp.Int64)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// run syncs every poll until ctx ends.
func (s *stateSync) run(ctx context.Context, poll time.Duration, log interface {
	Warn(string, ...any)
}) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			log.Warn("archive: writing agent profiles and file reservations failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
