package agentmail

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the contract (the reference's, except the body cap, which keeps
// one message well inside an MCP frame).
const (
	maxSubjectRunes = 200
	maxBodyBytes    = 1 << 20
	maxInboxLimit   = 1000
	maxRecipients   = 1000 // to + cc + bcc: each is resolved while the write lock is held
	defaultInbox    = 20
)

// listLimit is a search's result count: defaultInbox for none (0 or
// less), at most maxInboxLimit.
func listLimit(n int) int {
	if n <= 0 {
		return defaultInbox
	}
	return min(n, maxInboxLimit)
}

var threadIDPattern = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkThreadID(id string) error {
	if id != "" && !threadIDPattern().MatchString(id) {
		return invalid("thread_id %q is not valid: use 1–128 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. TKT-123)", id)
	}
	return nil
}

// SendParams are send_message's inputs. Recipients are agent names of the
// project, or "Name@project" (slug or absolute path) for another project.
type SendParams struct {
	ProjectKey  string
	Sender      string
	To, CC, BCC []string
	Subject     string
	BodyMD      string
	ThreadID    string
	Importance  string
	AckRequired bool
	// AttachmentPaths are files inside the project directory to store with
	// the message (see attachments.go).
	AttachmentPaths []string
	// SenderToken is the sender's registration token; it matters only with
	// Options.BindSenders, for a session that did not register the sender.
	SenderToken string
}

// outgoing is a message about to be stored, after validation.
type outgoing struct {
	proj        Project
	sender      Agent
	to, cc, bcc []string
	subject     string
	body        string
	threadID    string
	importance  Importance
	ack         bool
	replyTo     int64
	// contactRequest marks a contact request's introduction, which
	// contacts_only recipients accept (it is how contacts are made).
	contactRequest bool
	// notice marks mail about the recipient's own state (a force-released
	// reservation), which no policy holds.
	notice bool
	// attachments, read and checked before the transaction.
	attachments []Attachment
	// senderToken is the sender's registration token, if the caller gave it.
	senderToken string
	// system marks mail the server writes on the sender's behalf (the ACK
	// escalation): no session sends it, so no holder is checked, and it is
	// no activity of the sender's.
	system bool
}

// Send stores a message and delivers it to every recipient whose contact
// policy accepts it; the others get it held (never dropped) until they
// approve the sender, and the answer lists them under "held".
func (s *Service) Send(ctx context.Context, p SendParams) (SendResult, error) {
	imp, err := ParseImportance(p.Importance)
	if err != nil {
		return SendResult{}, err
	}
	if err := checkThreadID(p.ThreadID); err != nil {
		return SendResult{}, err
	}
	subject, warnings, err := checkContent(p.Subject, p.BodyMD)
	if err != nil {
		return SendResult{}, err
	}
	// Files are read before the write transaction: never while holding
	// every agent's write lock.
	var atts []Attachment
	if len(p.AttachmentPaths) > 0 {
		var dir string
		if err := s.st.Read(ctx, func(tx Tx) error {
			proj, err := s.project(ctx, tx, p.ProjectKey)
			dir = proj.HumanKey
			return err
		}); err != nil {
			return SendResult{}, fmt.Errorf("sending message: %w", err)
		}
		if atts, err = readAttachments(dir, p.AttachmentPaths, s.protected); err != nil {
			return SendResult{}, err
		}
	}
	var out SendResult
	var sender Agent
	var sentAt time.Time
	err = s.writeIn(ctx, messageScope(p.ProjectKey), func(tx Tx) error {
		var proj Project
		var err error
		proj, sender, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Sender)
		if err != nil {
			return err
		}
		m, held, err := s.sendTx(ctx, tx, outgoing{proj: proj, sender: sender, to: p.To, cc: p.CC, bcc: p.BCC,
			subject: subject, body: p.BodyMD, threadID: p.ThreadID, importance: imp, ack: p.AckRequired, attachments: atts,
			senderToken: p.SenderToken})
		if err != nil {
			return err
		}
		sentAt = m.CreatedAt
		out, err = s.sendResult(ctx, tx, m, held, warnings)
		return err
	})
	if err != nil {
		return SendResult{}, fmt.Errorf("sending message: %w", err)
	}
	s.agents.touched(sender, sentAt, senderTouchEvery)
	return out, nil
}

func checkContent(subject, body string) (string, []string, error) {
	var warnings []string
	subject = strings.TrimSpace(subject)
	if subject == "" {
		return "", nil, invalid("subject is required: give the message a short subject line")
	}
	if utf8.RuneCountInString(subject) > maxSubjectRunes {
		subject = string([]rune(subject)[:maxSubjectRunes])
		warnings = append(warnings, fmt.Sprintf("subject was cut to %d characters", maxSubjectRunes))
	}
	if len(body) > maxBodyBytes {
		return "", nil, invalid("body_md is %d bytes; the limit is %d. Split the message or reference a file.", len(body), maxBodyBytes)
	}
	return subject, warnings, nil
}

// senderTouchEvery is how old a sender's heartbeat must be for a send to
// write it again (one row write less per send on bursts).
const senderTouchEvery = time.Second

// sendTx resolves recipients, applies contact policies and stores the
// message, all inside the caller's write transaction.
func (s *Service) sendTx(ctx context.Context, tx Tx, o outgoing) (Message, []HeldNotice, error) {
	if !o.system {
		if err := s.checkSender(ctx, tx, o.sender, o.senderToken); err != nil {
			return Message{}, nil, err
		}
	}
	if n := len(o.to) + len(o.cc) + len(o.bcc); n > maxRecipients {
		return Message{}, nil, invalid("%d recipients; the limit is %d per message", n, maxRecipients)
	}
	now := s.clock()
	m := Message{ProjectID: o.proj.ID, SenderID: o.sender.ID, SenderName: o.sender.Name, ThreadID: o.threadID,
		Subject: o.subject, BodyMD: o.body, Importance: o.importance, AckRequired: o.ack, CreatedAt: now, ReplyTo: o.replyTo}
	seen := map[int64]bool{}
	var missing []string
	type rcpt struct {
		agent Agent
		kind  string
		links *links // read with the agent, where the store can
	}
	var rcpts []rcpt
	for _, list := range []struct {
		kind  string
		names []string
	}{{KindTo, o.to}, {KindCC, o.cc}, {KindBCC, o.bcc}} {
		for _, addr := range list.names {
			addr = strings.TrimSpace(addr)
			if addr == "" {
				continue
			}
			a, l, err := s.recipient(ctx, tx, o.proj, addr, o.sender.ID)
			if errors.Is(err, ErrNotFound) {
				missing = append(missing, addr)
				continue
			} else if err != nil {
				return Message{}, nil, err
			}
			if !seen[a.ID] {
				seen[a.ID] = true
				rcpts = append(rcpts, rcpt{a, list.kind, l})
			}
		}
	}
	if len(missing) > 0 {
		return Message{}, nil, s.recipientsNotFound(ctx, tx, o.proj, missing)
	}
	if len(rcpts) == 0 {
		return Message{}, nil, invalid("no recipients: name at least one agent in to, cc or bcc")
	}
	var held []HeldNotice
	var heldAgents []Agent
	for _, r := range rcpts {
		c := Recipient{AgentID: r.agent.ID, AgentName: r.agent.Name, ProjectID: r.agent.ProjectID, Kind: r.kind, DeliveredAt: now}
		ok, reason, err := s.accepts(ctx, tx, o, r.agent, now, r.links)
		if err != nil {
			return Message{}, nil, err
		}
		if !ok {
			c.DeliveredAt, c.HeldReason = zeroTime, reason
			held = append(held, HeldNotice{Agent: r.agent.Name, Policy: string(r.agent.ContactPolicy), Reason: reason,
				Remedy: fmt.Sprintf("The message is kept, not dropped: %s receives it once they approve you (respond_contact) or change their policy. A contact request was sent if none was pending.", r.agent.Name)})
			heldAgents = append(heldAgents, r.agent)
		}
		m.Recipients = append(m.Recipients, c)
	}
	if err := tx.InsertMessage(ctx, &m); err != nil {
		return Message{}, nil, err
	}
	if len(o.attachments) > 0 {
		if err := tx.InsertAttachments(ctx, m.ID, o.attachments); err != nil {
			return Message{}, nil, err
		}
		for _, a := range o.attachments {
			a.MessageID, a.Data, a.Project = m.ID, nil, o.proj.Slug
			m.Attachments = append(m.Attachments, a)
		}
	}
	if !o.system && now.Sub(o.sender.LastActiveAt) >= senderTouchEvery { // one row write less on bursts
		if err := tx.TouchAgent(ctx, o.sender.ID, now); err != nil {
			return Message{}, nil, err
		}
	}
	for _, a := range heldAgents {
		if err := s.autoRequest(ctx, tx, o.proj, o.sender, a, now); err != nil {
			return Message{}, nil, err
		}
	}
	if err := s.qualify(ctx, tx, &m); err != nil {
		return Message{}, nil, err
	}
	return m, held, nil
}

// addressed is the project and the agent's name an address names: "Name"
// in proj, or "Name@project" / "project:<slug>#Name" in another project;
// ErrNotFound for a project that does not exist.
func (s *Service) addressed(ctx context.Context, tx Tx, proj Project, addr string) (Project, string, error) {
	name, pkey := addr, ""
	if rest, ok := strings.CutPrefix(addr, "project:"); ok {
		if slug, n, ok := strings.Cut(rest, "#"); ok {
			pkey, name = slug, n
		}
	} else if n, k, ok := strings.Cut(addr, "@"); ok && n != "" && k != "" {
		pkey, name = k, n
	}
	p := proj
	if pkey != "" {
		var err error
		if p, err = s.project(ctx, tx, pkey); err != nil {
			if errors.Is(err, ErrProjectNotFound) {
				return Project{}, "", ErrNotFound
			}
			return Project{}, "", err
		}
	}
	return p, name, nil
}

func (s *Service) recipientsNotFound(ctx context.Context, tx Tx, p Project, names []string) error {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("Agent '%s' not found", n))
	}
	msg := strings.Join(parts, "; ") + fmt.Sprintf(" in project '%s'; nothing was sent.", p.Slug)
	if agents, err := tx.Agents(ctx, p.ID); err == nil {
		var near []string
		for _, n := range names {
			near = append(near, closeNames(n, agents)...)
		}
		if len(near) > 0 {
			msg += " Did you mean " + strings.Join(near, " or ") + "?"
		}
	}
	msg += " Recipients must be registered agent names (see resource://agents/<project>)."
	return newError("RECIPIENT_NOT_FOUND", ErrAgentNotFound, "%s", msg)
}

// qualify renders recipients of other projects as Name@slug.
//
// Its errors must reach the caller: on PostgreSQL a failed statement (a
// serialization failure, say) aborts the transaction, and one that went
// unreported would surface only at COMMIT, as a rollback no retry sees.
func (s *Service) qualify(ctx context.Context, tx Tx, m *Message) error {
	for i, r := range m.Recipients {
		if r.ProjectID != 0 && r.ProjectID != m.ProjectID {
			p, err := s.projectByID(ctx, tx, r.ProjectID)
			if err != nil {
				return err
			}
			m.Recipients[i].AgentName = r.AgentName + "@" + p.Slug
		}
	}
	return nil
}

// sendResult groups a stored message's recipients by project.
func (s *Service) sendResult(ctx context.Context, tx Tx, m Message, held []HeldNotice, warnings []string) (SendResult, error) {
	ds, err := s.deliveries(ctx, tx, m)
	if err != nil {
		return SendResult{}, err
	}
	return SendResult{Attachments: attachmentViews(m.Attachments), Held: held, Warnings: warnings, Deliveries: ds, Count: len(ds)}, nil
}

func (s *Service) deliveries(ctx context.Context, tx Tx, m Message) ([]Delivery, error) {
	var ds []Delivery
	seen := map[int64]bool{}
	payload := messagePayload(m, true)
	for _, r := range m.Recipients {
		pid := r.ProjectID
		if pid == 0 {
			pid = m.ProjectID
		}
		if seen[pid] {
			continue
		}
		seen[pid] = true
		p, err := s.projectByID(ctx, tx, pid)
		if err != nil {
			return nil, err
		}
		ds = append(ds, Delivery{Project: p.HumanKey, Payload: payload})
	}
	return ds, nil
}

// ReplyParams are reply_message's inputs.
type ReplyParams struct {
	ProjectKey    string
	MessageID     int64
	Sender        string
	BodyMD        string
	To, CC, BCC   []string // default: the original sender
	SubjectPrefix string   // default "Re:"
	SenderToken   string   // as SendParams.SenderToken
}

// Reply answers a message in its thread: the thread id is the original's (or
// the original's id when it started none), the subject gets the prefix once,
// and importance and ack_required are inherited.
func (s *Service) Reply(ctx context.Context, p ReplyParams) (ReplyResult, error) {
	prefix := strings.TrimSpace(p.SubjectPrefix)
	if prefix == "" {
		prefix = "Re:"
	}
	if len(p.BodyMD) > maxBodyBytes {
		return ReplyResult{}, invalid("body_md is %d bytes; the limit is %d", len(p.BodyMD), maxBodyBytes)
	}
	var out ReplyResult
	var sender Agent
	var sentAt time.Time
	err := s.writeIn(ctx, messageScope(p.ProjectKey), func(tx Tx) error {
		var proj Project
		var err error
		proj, sender, err = s.knownProjectAgent(ctx, tx, p.ProjectKey, p.Sender)
		if err != nil {
			return err
		}
		orig, err := s.message(ctx, tx, proj, p.MessageID)
		if err != nil {
			return err
		}
		thread := orig.Thread()
		subject := orig.Subject
		if !strings.HasPrefix(strings.ToLower(subject), strings.ToLower(prefix)) {
			subject = prefix + " " + subject
		}
		if utf8.RuneCountInString(subject) > maxSubjectRunes {
			subject = string([]rune(subject)[:maxSubjectRunes])
		}
		to := p.To
		if len(p.To)+len(p.CC)+len(p.BCC) == 0 {
			to, err = s.replyTargets(ctx, tx, orig, sender)
			if err != nil {
				return err
			}
		}
		m, held, err := s.sendTx(ctx, tx, outgoing{proj: proj, sender: sender, to: to, cc: p.CC, bcc: p.BCC, subject: subject,
			body: p.BodyMD, threadID: thread, importance: orig.Importance, ack: orig.AckRequired, replyTo: orig.ID,
			senderToken: p.SenderToken})
		if err != nil {
			return err
		}
		sentAt = m.CreatedAt
		ds, err := s.deliveries(ctx, tx, m)
		if err != nil {
			return err
		}
		out = ReplyResult{MessagePayload: messagePayload(m, true), ReplyTo: orig.ID, Deliveries: ds, Count: len(ds), Held: held}
		return nil
	})
	if err != nil {
		return ReplyResult{}, fmt.Errorf("replying to message: %w", err)
	}
	s.agents.touched(sender, sentAt, senderTouchEvery)
	return out, nil
}

// replyTargets is the original sender, or, when one replies to one's own
// message, the original's "to" recipients.
func (s *Service) replyTargets(ctx context.Context, tx Tx, orig Message, sender Agent) ([]string, error) {
	if orig.SenderID != sender.ID {
		a, err := tx.AgentByID(ctx, orig.SenderID)
		if err != nil {
			return nil, err
		}
		addr, err := s.address(ctx, tx, a, sender.ProjectID)
		if err != nil {
			return nil, err
		}
		return []string{addr}, nil
	}
	rs, err := tx.Recipients(ctx, []int64{orig.ID})
	if err != nil {
		return nil, err
	}
	var to []string
	for _, r := range rs[orig.ID] {
		if r.Kind == KindTo {
			a := Agent{Name: r.AgentName, ProjectID: r.ProjectID}
			addr, err := s.address(ctx, tx, a, sender.ProjectID)
			if err != nil {
				return nil, err
			}
			to = append(to, addr)
		}
	}
	return to, nil
}

// address is how an agent is addressed from project home.
func (s *Service) address(ctx context.Context, tx Tx, a Agent, home int64) (string, error) {
	if a.ProjectID == home || a.ProjectID == 0 {
		return a.Name, nil
	}
	p, err := s.projectByID(ctx, tx, a.ProjectID)
	if err != nil {
		return "", err
	}
	return a.Name + "@" + p.Slug, nil
}

// message loads a message of project p (with recipients).
func (s *Service) message(ctx context.Context, tx Tx, p Project, id int64) (Message, error) {
	m, err := tx.MessageByID(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && m.ProjectID != p.ID {
		return Message{}, newError("NOT_FOUND", ErrMessageNotFound, "Message %d not found in project '%s'.", id, p.Slug)
	}
	if err != nil {
		return Message{}, err
	}
	rs, err := tx.Recipients(ctx, []int64{id})
	if err != nil {
		return Message{}, err
	}
	m.Recipients = rs[id]
	if err := s.qualify(ctx, tx, &m); err != nil {
		return Message{}, err
	}
	return m, nil
}
