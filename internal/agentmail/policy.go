package agentmail

import (
	"context"
	"fmt"
	"time"
)

// ContactEntry is one line of list_contacts: an outgoing link ("to"), or an
// incoming request still waiting for this agent ("from", direction
// "incoming", with the number of messages it holds).
type ContactEntry struct {
	To           string  `json:"to,omitempty"`
	From         string  `json:"from,omitempty"`
	Direction    string  `json:"direction,omitempty"`
	Status       string  `json:"status"`
	Reason       string  `json:"reason"`
	HeldMessages int     `json:"held_messages,omitempty"`
	UpdatedTS    *string `json:"updated_ts"`
	ExpiresTS    *string `json:"expires_ts"`
}

// ListContacts lists the agent's contacts and the requests waiting for it.
func (s *Service) ListContacts(ctx context.Context, projectKey, agentName string) ([]ContactEntry, error) {
	out := []ContactEntry{}
	err := s.st.Read(ctx, func(tx Tx) error {
		proj, a, err := s.projectAgent(ctx, tx, projectKey, agentName)
		if err != nil {
			return err
		}
		now := s.clock()
		outgoing, err := tx.LinksFrom(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, l := range outgoing {
			name, err := s.linkName(ctx, tx, l.ToName, l.ToProject, proj)
			if err != nil {
				return err
			}
			out = append(out, ContactEntry{To: name, Status: linkStatus(l, now),
				Reason: l.Reason, UpdatedTS: ts(l.UpdatedAt), ExpiresTS: ts(l.ExpiresAt)})
		}
		incoming, err := tx.LinksTo(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, l := range incoming {
			if l.Status != LinkPending {
				continue
			}
			held, err := tx.HeldCopies(ctx, a.ID, l.FromAgentID)
			if err != nil {
				return err
			}
			name, err := s.linkName(ctx, tx, l.FromName, l.FromProject, proj)
			if err != nil {
				return err
			}
			out = append(out, ContactEntry{From: name, Direction: "incoming",
				Status: linkStatus(l, now), Reason: l.Reason, HeldMessages: len(held), UpdatedTS: ts(l.UpdatedAt), ExpiresTS: ts(l.ExpiresAt)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing contacts: %w", err)
	}
	return out, nil
}

// linkStatus is the stored status, or "expired" once an approval or request
// has lapsed.
func linkStatus(l ContactLink, now time.Time) string {
	if l.Status != LinkBlocked && !l.ExpiresAt.IsZero() && !l.ExpiresAt.After(now) {
		return "expired"
	}
	return l.Status
}

func (s *Service) linkName(ctx context.Context, tx Tx, name, humanKey string, home Project) (string, error) {
	if humanKey == "" || humanKey == home.HumanKey {
		return name, nil
	}
	p, err := tx.ProjectByHumanKey(ctx, humanKey)
	if err != nil {
		return "", err
	}
	return name + "@" + p.Slug, nil
}

// PolicyResult is set_contact_policy's answer. Released counts held
// messages the new policy lets in.
type PolicyResult struct {
	Agent    string `json:"agent"`
	Policy   string `json:"policy"`
	Released int    `json:"released,omitempty"`
}

// SetContactPolicy changes who may write to the agent. Messages held under
// the old policy that the new one accepts are delivered at once.
func (s *Service) SetContactPolicy(ctx context.Context, projectKey, agentName, policy string) (PolicyResult, error) {
	pol, err := ParsePolicy(policy)
	if err != nil {
		return PolicyResult{}, err
	}
	var out PolicyResult
	err = s.st.Write(ctx, func(tx Tx) error {
		_, a, err := s.projectAgent(ctx, tx, projectKey, agentName)
		if err != nil {
			return err
		}
		now := s.clock()
		a.ContactPolicy, a.LastActiveAt = pol, now
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		out = PolicyResult{Agent: a.Name, Policy: string(pol)}
		out.Released, err = s.releaseHeld(ctx, tx, a, 0, now, func(c Recipient) (bool, error) {
			m, err := tx.MessageByID(ctx, c.MessageID)
			if err != nil {
				return false, err
			}
			sender, err := tx.AgentByID(ctx, m.SenderID)
			if err != nil {
				return false, err
			}
			ok, _, err := s.accepts(ctx, tx, outgoing{sender: sender, threadID: m.ThreadID}, a, now, nil)
			return ok, err
		})
		return err
	})
	if err != nil {
		return PolicyResult{}, fmt.Errorf("setting contact policy: %w", err)
	}
	return out, nil
}
