package agentmail

// ACK escalation (the system overview's "ACK escalation — convert unacked
// messages to reservations"). A copy of an ack_required message that its
// recipient has not acknowledged escalates in two steps, each counted from
// the copy's delivery (a held copy is not late before it is delivered):
//
//  1. after the project's deadline D, a reminder to the recipient, from the
//     original sender, in the message's thread;
//  2. after 2·D, a notice to the sender (addressed to the sender itself: it
//     is the sender's own state), and, when EscalationOptions.Reserve is
//     set, a shared reservation for the sender of the paths the message
//     names (ReservablePaths).
//
// Every serving process runs a worker (RunEscalations) on the Service's
// clock. Processes sharing a store race on the same copies; each step is a
// row of am_ack_escalations inserted, ON CONFLICT DO NOTHING, in the
// transaction that sends the step's message, so exactly one process takes
// each step and the others see it taken. Escalation messages are ordinary
// messages (never ack_required, so they never escalate themselves): the
// mirror and the archive pick them up like any other.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// EscalationOptions configure the ACK escalation.
type EscalationOptions struct {
	// Deadline is the default time a recipient has to acknowledge; 0 turns
	// escalation off for every project not in Deadlines.
	Deadline time.Duration
	// Deadlines overrides Deadline per project, keyed by the project's slug
	// or absolute path; a value of 0 turns escalation off for the project.
	Deadlines map[string]time.Duration
	// Reserve makes the second step also reserve, for the sender, the paths
	// the message names (shared, ReserveTTL).
	Reserve bool
	// ReserveTTL is those reservations' lifetime; 0 means one hour.
	ReserveTTL time.Duration
}

// Escalation steps (am_ack_escalations.step).
const (
	StepReminder = 1 // reminder to the recipient, at the deadline
	StepNotice   = 2 // notice to the sender (and the reservation), at twice the deadline
)

// escalationHorizon bounds the worker's scan: a message older than twice
// the longest deadline plus this is never escalated (a server that was down
// for a week does not wake everyone with reminders of last week's mail).
const escalationHorizon = 7 * 24 * time.Hour

// escalationBatch bounds the copies one pass reads; the next pass takes the
// rest.
const escalationBatch = 500

// OverdueQuery selects copies that may be due for an escalation step.
type OverdueQuery struct {
	CreatedSince    time.Time // messages created at or after this
	DeliveredBefore time.Time // copies delivered at or before this
	LastStep        int       // skip copies that have taken this step
	Limit           int
}

// OverdueCopy is a delivered, unacknowledged copy of an ack_required
// message, with the last escalation step taken for it (0 for none).
type OverdueCopy struct {
	MessageID   int64
	AgentID     int64
	ProjectID   int64
	DeliveredAt time.Time
	Step        int
}

// Escalation is one step taken for one copy.
type Escalation struct {
	MessageID    int64
	AgentID      int64
	Step         int
	At           time.Time
	EscalationID int64 // the message sent for the step
}

// EscalationTx reads and writes the escalation state.
type EscalationTx interface {
	OverdueCopies(ctx context.Context, q OverdueQuery) ([]OverdueCopy, error)
	// ClaimEscalation records a step unless it is recorded already and
	// reports whether this call recorded it.
	ClaimEscalation(ctx context.Context, e Escalation) (bool, error)
	// SetEscalationMessage records the message sent for a claimed step.
	SetEscalationMessage(ctx context.Context, e Escalation) error
	// Escalations lists the steps taken for a message's copies.
	Escalations(ctx context.Context, messageID int64) ([]Escalation, error)
}

// EscalationReport counts what one pass did.
type EscalationReport struct {
	Reminders    int
	Notices      int
	Reservations int
}

func (o EscalationOptions) enabled() bool {
	if o.Deadline > 0 {
		return true
	}
	for _, d := range o.Deadlines {
		if d > 0 {
			return true
		}
	}
	return false
}

// deadline is p's deadline (0: p does not escalate).
func (o EscalationOptions) deadline(p Project) time.Duration {
	if d, ok := o.Deadlines[p.Slug]; ok {
		return d
	}
	if d, ok := o.Deadlines[p.HumanKey]; ok {
		return d
	}
	return o.Deadline
}

// bounds are the shortest and longest deadline of any project.
func (o EscalationOptions) bounds() (shortest, longest time.Duration) {
	shortest, longest = o.Deadline, o.Deadline
	for _, d := range o.Deadlines {
		if d <= 0 {
			continue
		}
		if shortest <= 0 || d < shortest {
			shortest = d
		}
		longest = max(longest, d)
	}
	return shortest, longest
}

// ParseDeadlines reads the setting AGENT_MAIL_ACK_DEADLINE: comma-separated
// items, one bare duration (the default for every project) and any number
// of project=duration (the project's slug or absolute path), where a
// duration is a Go duration or off (or 0): "30m,/abs/backend=10m,web=off".
func ParseDeadlines(s string) (EscalationOptions, error) {
	var o EscalationOptions
	seenDefault := false
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, per := strings.Cut(item, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !per {
			val = key
		}
		var d time.Duration
		if val != "off" && val != "0" {
			var err error
			if d, err = time.ParseDuration(val); err != nil || d <= 0 {
				return EscalationOptions{}, fmt.Errorf("%q: %q is not a duration (e.g. 30m, 2h, or off)", item, val)
			}
		}
		switch {
		case per && key == "":
			return EscalationOptions{}, fmt.Errorf("%q: write project=duration (e.g. /abs/backend=15m)", item)
		case per:
			if o.Deadlines == nil {
				o.Deadlines = map[string]time.Duration{}
			}
			o.Deadlines[key] = d
		case seenDefault:
			return EscalationOptions{}, fmt.Errorf("%q: a second default; write project=duration for a project's own deadline", item)
		default:
			o.Deadline, seenDefault = d, true
		}
	}
	return o, nil
}

// RunEscalations runs EscalateDue every interval until ctx ends. Failures
// are logged; the next pass tries again.
func (s *Service) RunEscalations(ctx context.Context, every time.Duration) {
	if !s.esc.enabled() {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.EscalateDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("ack escalation pass failed; retrying at the next one", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// EscalateDue takes every escalation step due at the Service's clock.
func (s *Service) EscalateDue(ctx context.Context) (EscalationReport, error) {
	var rep EscalationReport
	if !s.esc.enabled() {
		return rep, nil
	}
	now := s.clock()
	shortest, longest := s.esc.bounds()
	type due struct {
		c        OverdueCopy
		deadline time.Duration
		step     int
	}
	var work []due
	err := s.st.Read(ctx, func(tx Tx) error {
		work = work[:0]
		cs, err := tx.OverdueCopies(ctx, OverdueQuery{CreatedSince: now.Add(-2*longest - escalationHorizon),
			DeliveredBefore: now.Add(-shortest), LastStep: StepNotice, Limit: escalationBatch})
		if err != nil {
			return err
		}
		for _, c := range cs {
			p, err := s.projectByID(ctx, tx, c.ProjectID)
			if err != nil {
				return err
			}
			d := s.esc.deadline(p)
			if d <= 0 {
				continue
			}
			step := 0
			switch late := now.Sub(c.DeliveredAt); {
			case late >= 2*d:
				step = StepNotice
			case late >= d:
				step = StepReminder
			}
			if step > c.Step {
				work = append(work, due{c, d, step})
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("ack escalation: %w", err)
	}
	for _, w := range work {
		r, err := s.escalateCopy(ctx, w.c, w.deadline, w.step, now)
		if err != nil {
			return rep, fmt.Errorf("ack escalation of message %d to agent %d: %w", w.c.MessageID, w.c.AgentID, err)
		}
		rep.Reminders += r.Reminders
		rep.Notices += r.Notices
		rep.Reservations += r.Reservations
	}
	return rep, nil
}

// escalateCopy takes the steps after c.Step up to step, in one transaction.
func (s *Service) escalateCopy(ctx context.Context, c OverdueCopy, deadline time.Duration, step int, now time.Time) (EscalationReport, error) {
	var rep EscalationReport
	err := s.st.Write(ctx, func(tx Tx) error {
		rep = EscalationReport{}
		cp, err := tx.Copy(ctx, c.MessageID, c.AgentID)
		if err != nil {
			return err
		}
		if !cp.AckAt.IsZero() {
			return nil // acknowledged since the scan
		}
		m, err := tx.MessageByID(ctx, c.MessageID)
		if err != nil {
			return err
		}
		proj, err := s.projectByID(ctx, tx, m.ProjectID)
		if err != nil {
			return err
		}
		sender, err := tx.AgentByID(ctx, m.SenderID)
		if err != nil {
			return err
		}
		rcpt, err := tx.AgentByID(ctx, c.AgentID)
		if err != nil {
			return err
		}
		rcptAddr, err := s.address(ctx, tx, rcpt, proj.ID)
		if err != nil {
			return err
		}
		thread := m.Thread()
		for st := c.Step + 1; st <= step; st++ {
			e := Escalation{MessageID: m.ID, AgentID: rcpt.ID, Step: st, At: now}
			claimed, err := tx.ClaimEscalation(ctx, e)
			if err != nil {
				return err
			}
			if !claimed {
				continue // another process took this step
			}
			o := outgoing{proj: proj, sender: sender, threadID: thread, importance: ImportanceHigh, notice: true, system: true}
			var reserved []string
			switch st {
			case StepReminder:
				o.to = []string{rcptAddr}
				o.subject = clipSubject("Reminder: please acknowledge: " + m.Subject)
				o.body = fmt.Sprintf("Message %d from %s, \"%s\", asks for an acknowledgement, and %s has not acknowledged it %s after it was delivered.\n\n"+
					"Read it, then call acknowledge_message with message_id %d. If %s has not acknowledged it %s after delivery, %s is told.\n\n"+
					"(Sent by mailgate's ack escalation on %s's behalf.)",
					m.ID, sender.Name, m.Subject, rcpt.Name, deadline, m.ID, rcpt.Name, 2*deadline, sender.Name, sender.Name)
			case StepNotice:
				if s.esc.Reserve {
					if reserved, err = s.escalationReserve(ctx, tx, proj, sender, m, now); err != nil {
						return err
					}
				}
				o.to = []string{sender.Name}
				o.subject = clipSubject(fmt.Sprintf("Not acknowledged by %s: %s", rcptAddr, m.Subject))
				o.body = fmt.Sprintf("%s has not acknowledged your message %d, \"%s\", %s after it was delivered (a reminder was sent at %s).",
					rcptAddr, m.ID, m.Subject, 2*deadline, cp.DeliveredAt.Add(deadline).UTC().Format(time.RFC3339))
				if len(reserved) > 0 {
					o.body += fmt.Sprintf("\n\nThe paths it names are now reserved for you (shared, until %s): %s.",
						now.Add(s.reserveTTL()).Format(time.RFC3339), strings.Join(reserved, ", "))
				}
				o.body += "\n\n(Sent by mailgate's ack escalation.)"
			}
			sent, _, err := s.sendTx(ctx, tx, o)
			if err != nil {
				return err
			}
			e.EscalationID = sent.ID
			if err := tx.SetEscalationMessage(ctx, e); err != nil {
				return err
			}
			switch st {
			case StepReminder:
				rep.Reminders++
			case StepNotice:
				rep.Notices++
				rep.Reservations += len(reserved)
			}
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return EscalationReport{}, nil // the copy or an agent went away
	}
	return rep, err
}

func clipSubject(s string) string {
	if utf8.RuneCountInString(s) > maxSubjectRunes {
		return string([]rune(s)[:maxSubjectRunes])
	}
	return s
}

func (s *Service) reserveTTL() time.Duration {
	if s.esc.ReserveTTL > 0 {
		return s.esc.ReserveTTL
	}
	return defaultReservationTTL
}

// escalationReserve reserves, for sender, the paths m names that sender does
// not hold yet: shared reservations, which conflict with nobody's shared
// ones and are reported to exclusive holders as any other overlap is.
func (s *Service) escalationReserve(ctx context.Context, tx Tx, proj Project, sender Agent, m Message, now time.Time) ([]string, error) {
	var named []string
	if atts, err := tx.AttachmentsOf(ctx, []int64{m.ID}, false); err != nil {
		return nil, err
	} else {
		for _, a := range atts[m.ID] {
			named = append(named, a.Path)
		}
	}
	full, err := tx.MessageByID(ctx, m.ID) // with its body
	if err != nil {
		return nil, err
	}
	named = append(named, ReservablePaths(full.Subject+"\n"+full.BodyMD)...)
	if len(named) == 0 {
		return nil, nil
	}
	held, err := tx.Reservations(ctx, ReservationQuery{ProjectID: proj.ID, AgentID: sender.ID, ActiveAt: now})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, r := range held {
		have[r.PathPattern] = true
	}
	var rs []*Reservation
	var paths []string
	for _, raw := range named {
		p := NormalizePattern(raw, proj.HumanKey)
		if have[p] || p == "" || p == "**" || len(rs) == maxEscalationPaths {
			continue
		}
		have[p] = true
		paths = append(paths, p)
		rs = append(rs, &Reservation{ProjectID: proj.ID, AgentID: sender.ID, AgentName: sender.Name, PathPattern: p,
			Reason: fmt.Sprintf("ack-escalation: message %d not acknowledged", m.ID), CreatedAt: now, ExpiresAt: now.Add(s.reserveTTL())})
	}
	if err := tx.InsertReservations(ctx, rs); err != nil {
		return nil, err
	}
	return paths, nil
}

// maxEscalationPaths bounds the reservations one escalation makes.
const maxEscalationPaths = 50

// inlineCode is a Markdown code span on one line.
var inlineCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`\n]+)`") })

// ReservablePaths returns the paths a message names: its code spans
// (`src/auth.py`, `tests/*.py`) that look like a path or glob relative to a
// project — no spaces, a slash or a dot or a glob character, no scheme, not
// absolute unless under the project (NormalizePattern decides later) — and
// that a reservation accepts. Prose is never guessed at: only code spans
// count, as agents write paths in them.
func ReservablePaths(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, sm := range inlineCode().FindAllStringSubmatch(text, -1) {
		p := strings.TrimSpace(sm[1])
		if p == "" || seen[p] || strings.ContainsAny(p, " \t\"'`(){}<>|;&$") || strings.Contains(p, "://") ||
			!strings.ContainsAny(p, "/.*?[") || strings.HasPrefix(p, "-") || strings.HasSuffix(p, "()") ||
			len(p) > maxPatternBytes || patternProblem(p) != "" || strings.Contains(p, "..") {
			continue
		}
		seen[p] = true
		out = append(out, p)
		if len(out) == maxEscalationPaths {
			break
		}
	}
	return out
}
