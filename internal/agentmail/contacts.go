package agentmail

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Default contact lifetimes, as in the reference.
const (
	defaultRequestTTL  = 7 * 24 * time.Hour
	defaultApprovalTTL = 30 * 24 * time.Hour
)

// accepts decides whether rcpt's policy lets o's message into its inbox now;
// when it does not, reason says why (the message is then held).
func (s *Service) accepts(ctx context.Context, tx Tx, o outgoing, rcpt Agent, now time.Time, pre *links) (bool, string, error) {
	from := o.sender
	if from.ID == rcpt.ID || o.notice {
		return true, "", nil
	}
	var fwd, back ContactLink
	if pre != nil { // read with rcpt, in this transaction
		fwd, back = pre.fwd, pre.back
	} else {
		var err error
		if fwd, back, err = tx.LinkPair(ctx, from.ID, rcpt.ID); err != nil {
			return false, "", err
		}
	}
	if fwd.Status == LinkBlocked {
		return false, fmt.Sprintf("%s declined contact from %s", rcpt.Name, from.Name), nil
	}
	approved := fwd.ApprovedAt(now) || back.ApprovedAt(now)
	switch rcpt.ContactPolicy {
	case PolicyOpen:
		return true, "", nil
	case PolicyContactsOnly:
		if approved || o.contactRequest {
			return true, "", nil
		}
		return false, fmt.Sprintf("%s accepts mail only from approved contacts (contacts_only)", rcpt.Name), nil
	case PolicyBlockAll:
		return false, fmt.Sprintf("%s accepts no new mail (block_all)", rcpt.Name), nil
	default: // auto
		if approved || o.contactRequest || from.ProjectID == rcpt.ProjectID {
			return true, "", nil
		}
		if o.threadID != "" {
			in, err := tx.InThread(ctx, rcpt.ID, rcpt.ProjectID, o.threadID)
			if err != nil || in {
				return in, "", err
			}
		}
		return false, fmt.Sprintf("%s is in another project and has not approved contact from %s", rcpt.Name, from.Name), nil
	}
}

// link returns the link from → to, or a zero link when there is none.
func link(ctx context.Context, tx Tx, from, to int64) (ContactLink, error) {
	l, err := tx.Link(ctx, from, to)
	if errors.Is(err, ErrNotFound) {
		return ContactLink{}, nil
	}
	return l, err
}

// autoRequest makes sure a recipient holding mail from sender learns about
// it: a pending contact request and, unless the recipient blocks
// everything, one introduction message. Existing pending or decided links are
// left alone so held mail never turns into a stream of requests.
func (s *Service) autoRequest(ctx context.Context, tx Tx, proj Project, from, to Agent, now time.Time) error {
	l, err := link(ctx, tx, from.ID, to.ID)
	if err != nil {
		return err
	}
	if l.ID != 0 && (l.Status != LinkPending || l.ExpiresAt.IsZero() || l.ExpiresAt.After(now)) {
		return nil
	}
	_, err = s.requestTx(ctx, tx, proj, from, to, "held mail is waiting for your approval", defaultRequestTTL, now)
	return err
}

// requestTx records a pending request from → to and introduces it.
func (s *Service) requestTx(ctx context.Context, tx Tx, proj Project, from, to Agent, reason string, ttl time.Duration, now time.Time) (ContactLink, error) {
	l, err := link(ctx, tx, from.ID, to.ID)
	if err != nil {
		return ContactLink{}, err
	}
	if l.ApprovedAt(now) || l.Status == LinkBlocked {
		return l, nil // already decided: a new request changes nothing
	}
	l = ContactLink{ID: l.ID, FromAgentID: from.ID, ToAgentID: to.ID, Status: LinkPending, Reason: reason,
		CreatedAt: orNow(l.CreatedAt, now), UpdatedAt: now, ExpiresAt: now.Add(ttl)}
	if err := tx.UpsertLink(ctx, &l); err != nil {
		return ContactLink{}, err
	}
	body := fmt.Sprintf("%s requests permission to contact %s.", from.Name, to.Name)
	if reason != "" {
		body += "\n\nReason: " + reason
	}
	held, err := tx.HeldCopies(ctx, to.ID, from.ID)
	if err != nil {
		return ContactLink{}, err
	}
	if len(held) > 0 {
		body += fmt.Sprintf("\n\n%d message(s) from %s are held for you. Approve with respond_contact (accept=true) to receive them.", len(held), from.Name)
	}
	addr, err := s.address(ctx, tx, to, proj.ID)
	if err != nil {
		return ContactLink{}, err
	}
	_, _, err = s.sendTx(ctx, tx, outgoing{proj: proj, sender: from, to: []string{addr},
		subject: "Contact request from " + from.Name, body: body, importance: ImportanceNormal, ack: true, contactRequest: true})
	return l, err
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

// ContactParams name the two sides of a contact operation.
type ContactParams struct {
	ProjectKey string // the project of From (request) or of To (respond)
	From       string // requester
	To         string // target / responder
	ToProject  string // request: the target's project when not ProjectKey
	FromProj   string // respond: the requester's project when not ProjectKey
	Reason     string
	TTLSeconds int
	Accept     bool
}

// ContactRequestResult is request_contact's answer.
type ContactRequestResult struct {
	From        string  `json:"from"`
	FromProject string  `json:"from_project"`
	To          string  `json:"to"`
	ToProject   string  `json:"to_project"`
	Status      string  `json:"status"`
	ExpiresTS   *string `json:"expires_ts"`
}

// RequestContact asks To for permission to write (needed across projects,
// and for recipients with contacts_only). It sends an introduction that
// needs an acknowledgement. Asking again after approval changes nothing.
func (s *Service) RequestContact(ctx context.Context, p ContactParams) (ContactRequestResult, error) {
	var out ContactRequestResult
	err := s.st.Write(ctx, func(tx Tx) error {
		fromProj, from, toProj, to, err := s.contactSides(ctx, tx, p.ProjectKey, p.From, p.ToProject, p.To)
		if err != nil {
			return err
		}
		now := s.clock()
		l, err := s.requestTx(ctx, tx, fromProj, from, to, p.Reason, ttlOr(p.TTLSeconds, defaultRequestTTL), now)
		if err != nil {
			return err
		}
		out = ContactRequestResult{From: from.Name, FromProject: fromProj.HumanKey, To: to.Name, ToProject: toProj.HumanKey,
			Status: l.Status, ExpiresTS: ts(l.ExpiresAt)}
		return tx.TouchAgent(ctx, from.ID, now)
	})
	if err != nil {
		return ContactRequestResult{}, fmt.Errorf("requesting contact: %w", err)
	}
	return out, nil
}

func ttlOr(seconds int, def time.Duration) time.Duration {
	if seconds <= 0 {
		return def
	}
	return time.Duration(seconds) * time.Second
}

// contactSides resolves (project, agent) for both ends.
func (s *Service) contactSides(ctx context.Context, tx Tx, pkey, aName, otherKey, bName string) (Project, Agent, Project, Agent, error) {
	pa, a, err := s.projectAgent(ctx, tx, pkey, aName)
	if err != nil {
		return Project{}, Agent{}, Project{}, Agent{}, err
	}
	pb := pa
	if otherKey != "" {
		if pb, err = s.project(ctx, tx, otherKey); err != nil {
			return Project{}, Agent{}, Project{}, Agent{}, err
		}
	}
	b, err := s.agent(ctx, tx, pb, bName)
	if err != nil {
		return Project{}, Agent{}, Project{}, Agent{}, err
	}
	return pa, a, pb, b, nil
}

// ContactResponseResult is respond_contact's answer. Released counts held
// messages delivered by the approval.
type ContactResponseResult struct {
	From      string  `json:"from"`
	To        string  `json:"to"`
	Approved  bool    `json:"approved"`
	ExpiresTS *string `json:"expires_ts"`
	Updated   int     `json:"updated"`
	Released  int     `json:"released,omitempty"`
}

// RespondContact approves or declines From's contact with To (the
// responder). Approval works both ways and delivers everything From had
// held for To; declining keeps held mail held, never deletes it.
func (s *Service) RespondContact(ctx context.Context, p ContactParams) (ContactResponseResult, error) {
	var out ContactResponseResult
	err := s.st.Write(ctx, func(tx Tx) error {
		_, to, _, from, err := s.contactSides(ctx, tx, p.ProjectKey, p.To, p.FromProj, p.From)
		if err != nil {
			return err
		}
		now := s.clock()
		l, err := link(ctx, tx, from.ID, to.ID)
		if err != nil {
			return err
		}
		l.FromAgentID, l.ToAgentID, l.UpdatedAt, l.CreatedAt = from.ID, to.ID, now, orNow(l.CreatedAt, now)
		l.Status, l.ExpiresAt = LinkBlocked, zeroTime
		if p.Accept {
			l.Status, l.ExpiresAt = LinkApproved, now.Add(ttlOr(p.TTLSeconds, defaultApprovalTTL))
		}
		if err := tx.UpsertLink(ctx, &l); err != nil {
			return err
		}
		out = ContactResponseResult{From: from.Name, To: to.Name, Approved: p.Accept, ExpiresTS: ts(l.ExpiresAt), Updated: 1}
		if p.Accept {
			back, err := link(ctx, tx, to.ID, from.ID)
			if err != nil {
				return err
			}
			back = ContactLink{ID: back.ID, FromAgentID: to.ID, ToAgentID: from.ID, Status: LinkApproved, Reason: back.Reason,
				CreatedAt: orNow(back.CreatedAt, now), UpdatedAt: now, ExpiresAt: l.ExpiresAt}
			if err := tx.UpsertLink(ctx, &back); err != nil {
				return err
			}
			if out.Released, err = s.releaseHeld(ctx, tx, to, from.ID, now, nil); err != nil {
				return err
			}
		}
		return tx.TouchAgent(ctx, to.ID, now)
	})
	if err != nil {
		return ContactResponseResult{}, fmt.Errorf("responding to contact: %w", err)
	}
	return out, nil
}

// releaseHeld delivers copies held for rcpt (from sender, or from anyone when
// sender is 0) that keep(copy) accepts (nil: all).
func (s *Service) releaseHeld(ctx context.Context, tx Tx, rcpt Agent, sender int64, now time.Time, keep func(Recipient) (bool, error)) (int, error) {
	held, err := tx.HeldCopies(ctx, rcpt.ID, sender)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range held {
		if keep != nil {
			ok, err := keep(c)
			if err != nil {
				return n, err
			}
			if !ok {
				continue
			}
		}
		if err := tx.Deliver(ctx, c.MessageID, rcpt.ID, now); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
