package agentmail

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Reads for the components that copy agent mail out of the store (the Gmail
// mirror, the vault archive: internal/mirror). They know a message only by
// the id their outbox names, not by a project key and an agent, so these
// reads take ids; and they return the message as stored (recipient names
// unqualified, held copies included), since a copy records what was sent.
// They are the mirror's only way in: it never reads agent-mail's tables.

// MessageByID returns message id with every recipient's copy, in the order
// they were addressed, and the message's project. A missing message is
// ErrMessageNotFound.
func (s *Service) MessageByID(ctx context.Context, id int64) (Message, Project, error) {
	var m Message
	var p Project
	err := s.st.Read(ctx, func(tx Tx) error {
		var err error
		if m, err = tx.MessageByID(ctx, id); err != nil {
			return err
		}
		if p, err = s.projectByID(ctx, tx, m.ProjectID); err != nil {
			return err
		}
		rs, err := tx.Recipients(ctx, []int64{id})
		m.Recipients = rs[id]
		return err
	})
	if errors.Is(err, ErrNotFound) {
		err = ErrMessageNotFound
	}
	if err != nil {
		return Message{}, Project{}, fmt.Errorf("reading message %d: %w", id, err)
	}
	return m, p, nil
}

// ThreadBefore returns the messages of a project's thread (those whose
// thread_id is threadID, and the message whose id is threadID if it names
// no thread) with an id below beforeID, oldest first, without bodies or
// recipients.
func (s *Service) ThreadBefore(ctx context.Context, projectID int64, threadID string, beforeID int64) ([]Message, error) {
	var out []Message
	err := s.st.Read(ctx, func(tx Tx) error {
		// Thread has no upper id bound: read the whole thread (it comes
		// oldest first, so the messages before beforeID are a prefix).
		ms, err := tx.Thread(ctx, projectID, threadID, maxThreadRead, false)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, m := range ms {
			if m.ID >= beforeID {
				break
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading thread %q: %w", threadID, err)
	}
	return out, nil
}

// maxThreadRead bounds ThreadBefore's read; no thread comes near it.
const maxThreadRead = math.MaxInt32

// AgentByID returns agent id and its project, for the vault archive's
// profile.json. A missing agent is ErrNotFound.
func (s *Service) AgentByID(ctx context.Context, id int64) (Agent, Project, error) {
	return readWithProject(ctx, s, "agent", id, func(tx Tx) (Agent, int64, error) {
		a, err := tx.AgentByID(ctx, id)
		return a, a.ProjectID, err
	})
}

// ReservationByID returns reservation id (with its holder's name) and its
// project, for the vault archive's file_reservations/<id>.json. A missing
// reservation is ErrNotFound.
func (s *Service) ReservationByID(ctx context.Context, id int64) (Reservation, Project, error) {
	return readWithProject(ctx, s, "file reservation", id, func(tx Tx) (Reservation, int64, error) {
		r, err := tx.ReservationByID(ctx, id)
		return r, r.ProjectID, err
	})
}

// readWithProject reads, in one transaction, a row by its id with get
// (which also answers the row's project id) and that project; what and id
// name the row in the error.
func readWithProject[T any](ctx context.Context, s *Service, what string, id int64, get func(Tx) (T, int64, error)) (T, Project, error) {
	var v T
	var p Project
	err := s.st.Read(ctx, func(tx Tx) error {
		var projectID int64
		var err error
		if v, projectID, err = get(tx); err != nil {
			return err
		}
		p, err = s.projectByID(ctx, tx, projectID)
		return err
	})
	if err != nil {
		var zero T
		return zero, Project{}, fmt.Errorf("reading %s %d: %w", what, id, err)
	}
	return v, p, nil
}
