package mirror

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
)

// GmailSinkName is the Gmail mirror's outbox name.
const GmailSinkName = "gmail"

// LabelPrefix is the parent of the per-project labels.
const LabelPrefix = "AgentMail/"

// maxLabelSlug bounds the project part of a label: Gmail refuses long
// label names (a 400 no retry cures), and a slug is as long as its
// project key.
const maxLabelSlug = 100

// LabelName is the label of a project's mirrored mail: LabelPrefix and the
// slug, a slug over maxLabelSlug bytes cut and followed by a hash of the
// whole, so that two long slugs keep two labels.
func LabelName(slug string) string {
	if len(slug) > maxLabelSlug {
		sum := sha256.Sum256([]byte(slug))
		slug = slug[:maxLabelSlug-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return LabelPrefix + slug
}

// GmailSink copies messages into the mailbox with messages.insert.
//
// Exactly once: the outbox row and the am_mirror_gmail_messages record go
// in one transaction, so a recorded message is never inserted again. The
// gap between Gmail's answer and that transaction is closed by the
// deterministic Message-ID: a row claimed for the second time first asks
// Gmail for rfc822msgid:<id> and records what it finds instead of
// inserting. (Real Gmail indexes an insert for search within seconds; a
// crash and a re-claim inside that window could still duplicate, which the
// lease length makes practically impossible. An insert that failed without
// a clear answer is looked up again only a lease later for the same
// reason: outbox.UnsureError.)
type GmailSink struct {
	DB       *store.DB       // the mirror's records
	Messages outbox.Messages // the agent mail it copies
	Mailbox  Mailbox
	// AfterInsert, when set, runs between a successful insert and its
	// record: the crash tests kill the process here.
	AfterInsert func(messageID int64)

	mu     sync.Mutex
	labels map[string]string // label name → id, resolved once per process
}

// Name implements outbox.Sink.
func (s *GmailSink) Name() string { return GmailSinkName }

// Process implements outbox.Sink.
func (s *GmailSink) Process(ctx context.Context, it outbox.Item) (func(context.Context, *sql.Tx) error, error) {
	m, err := outbox.LoadMessage(ctx, s.Messages, it.MessageID)
	if errors.Is(err, outbox.ErrNoMessage) {
		return nil, nil // deleted since: nothing to mirror
	}
	if err != nil {
		return nil, err
	}
	if done, err := s.recorded(ctx, m.ID); err != nil || done {
		return nil, err
	}
	msgID := MessageID(m.ProjectSlug, m.ID, m.CreatedAt)
	if it.Attempts > 1 {
		// An earlier claim may have inserted and died before recording.
		ref, found, err := s.mailbox().FindRFC822(ctx, msgID)
		if err != nil {
			return nil, err
		}
		if found {
			return s.record(m, msgID, ref), nil
		}
	}
	prior, err := outbox.PriorInThread(ctx, s.Messages, m)
	if err != nil {
		return nil, err
	}
	labelID, err := s.label(ctx, LabelName(m.ProjectSlug))
	if err != nil {
		return nil, err
	}
	threadID, err := s.gmailThread(ctx, m)
	if err != nil {
		return nil, err
	}
	raw, err := buildRaw(m, prior)
	if err != nil {
		return nil, &outbox.PermanentError{Err: err}
	}
	ref, err := s.mailbox().Insert(ctx, raw, threadID, []string{labelID})
	if st := gmail.StatusCode(err); threadID != "" && (st == http.StatusBadRequest || st == http.StatusNotFound) {
		// The mapped thread is gone (the user deleted it): start a new
		// one rather than keep failing. The new id replaces the mapping.
		ref, err = s.mailbox().Insert(ctx, raw, "", []string{labelID})
		if err == nil {
			rec := s.record(m, msgID, ref)
			return func(ctx context.Context, tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, s.DB.Rebind(`DELETE FROM am_mirror_gmail_threads WHERE project_id = ? AND thread_key = ?`), m.ProjectID, m.ThreadKey); err != nil {
					return err
				}
				return rec(ctx, tx)
			}, nil
		}
	}
	if err != nil {
		st := gmail.StatusCode(err)
		if st == http.StatusBadRequest {
			s.forgetLabels() // a deleted label is one cause; resolve again next time
		}
		err = fmt.Errorf("mirroring message %d: %w", m.ID, err)
		if st == 0 || st >= 500 {
			err = &outbox.UnsureError{Err: err} // Gmail may have stored it all the same
		}
		return nil, err
	}
	if s.AfterInsert != nil {
		s.AfterInsert(m.ID)
	}
	return s.record(m, msgID, ref), nil
}

// record returns the idempotent bookkeeping for a mirrored message: the
// message's Gmail id and, for the first message of a thread, the thread
// mapping later messages join.
func (s *GmailSink) record(m *outbox.Message, msgID string, ref Ref) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.DB.Rebind(`INSERT INTO am_mirror_gmail_messages (message_id, gmail_id, gmail_thread_id, rfc_message_id, mirrored_us)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`), m.ID, ref.ID, ref.ThreadID, msgID, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("recording Gmail id of message %d: %w", m.ID, err)
		}
		if _, err := tx.ExecContext(ctx, s.DB.Rebind(`INSERT INTO am_mirror_gmail_threads (project_id, thread_key, gmail_thread_id)
			VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), m.ProjectID, m.ThreadKey, ref.ThreadID); err != nil {
			return fmt.Errorf("recording Gmail thread of message %d: %w", m.ID, err)
		}
		return nil
	}
}

func (s *GmailSink) recorded(ctx context.Context, id int64) (bool, error) {
	var n int
	if err := s.DB.QueryRowContext(ctx, s.DB.Rebind(`SELECT count(*) FROM am_mirror_gmail_messages WHERE message_id = ?`), id).Scan(&n); err != nil {
		return false, fmt.Errorf("checking mirror record of message %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *GmailSink) gmailThread(ctx context.Context, m *outbox.Message) (string, error) {
	var tid string
	err := s.DB.QueryRowContext(ctx, s.DB.Rebind(`SELECT gmail_thread_id FROM am_mirror_gmail_threads WHERE project_id = ? AND thread_key = ?`),
		m.ProjectID, m.ThreadKey).Scan(&tid)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading Gmail thread of message %d: %w", m.ID, err)
	}
	return tid, nil
}

// label resolves name to a label id, creating the label when missing. Two
// processes may race to create it: the loser gets 409 and lists again.
// The mutex makes one process create it once however many rows are in
// flight.
func (s *GmailSink) label(ctx context.Context, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.labels[name]; ok {
		return id, nil
	}
	id, err := s.mailbox().LabelID(ctx, name)
	if err == nil && id == "" {
		id, err = s.mailbox().CreateLabel(ctx, name)
		if errors.Is(err, ErrLabelExists) {
			id, err = s.mailbox().LabelID(ctx, name)
			if err == nil && id == "" {
				err = &outbox.TransientError{Err: fmt.Errorf("label %q exists but is not listed yet", name)}
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("resolving label %q: %w", name, err)
	}
	if s.labels == nil {
		s.labels = map[string]string{}
	}
	s.labels[name] = id
	return id, nil
}

// mailbox is s.Mailbox with its transient failures typed for the worker.
func (s *GmailSink) mailbox() Mailbox { return transientMailbox{s.Mailbox} }

func isLabelExists(err error) bool { return errors.Is(err, ErrLabelExists) }

func (s *GmailSink) forgetLabels() {
	s.mu.Lock()
	s.labels = nil
	s.mu.Unlock()
}
