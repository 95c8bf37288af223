package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// Send later (issue 27 item 7). A request with a send time is approved like
// any other and the agent calls again as usual; when the time is still
// ahead, the gate claims the approval (it can never be used twice) and
// keeps the email the call composed, built whole (Composed.Email), in the
// store (Gate.Scheduler) instead of sending it. At its time whichever server runs takes it
// (Later.RunDue): one process wins the store's claim on it, reserves a slot,
// marks the Done file sending, sends once and records the outcome. An email
// whose time passed more than the grace ago (no server ran) is never sent:
// it is moved to Rejected/ with the reason.
//
// Crash states added to gate.go's table:
//
//	after                    state                                         consequence
//	Claim (scheduling)       Done file as moved, no row                    an unknown outcome (settled "not sent")
//	Schedule (row stored)    Done file as moved, row scheduled             never sent (the Done file does not say
//	                                                                       scheduled); settled "not sent" like any claim cut short
//	RecordScheduled          Done scheduled, row scheduled                 sent at its time
//	store claim (sending)    row sending, Done scheduled                   never sent (a stale sending row is reported)
//	MarkSending              Done sending (unknown), row sending           settled from Sent like any unknown outcome
//	Record                   Done sent/failed/unknown                      row updated next; a lost update only leaves the row sending

// Prepared is an email built whole for Gmail: what a scheduled send keeps.
type Prepared struct {
	Raw      []byte
	ThreadID string
}

// ScheduledEmail is one approved email kept for later.
type ScheduledEmail struct {
	DoneName      string           // its Done file: the key
	SendAt        time.Time        // UTC
	Final         approval.Request // the approved email (OutgoingMessageID set)
	ContentSHA256 string           // the request as issued
	Tool          string
	Prepared
}

// Scheduler keeps scheduled emails (internal/schedule.Store).
type Scheduler interface {
	Schedule(ctx context.Context, e ScheduledEmail) error
}

// Scheduled: the approval was consumed and the email kept for its time.
// (A Status; see gate.go.)
const ActionSchedule = "gate_schedule"

// DefaultLateGrace is how long after its send time a scheduled email is
// still sent (SEND_LATER_GRACE).
const DefaultLateGrace = time.Hour

func (g *Gate) lateGrace() time.Duration {
	if g.LateGrace > 0 {
		return g.LateGrace
	}
	return DefaultLateGrace
}

// later decides what a matched approval with a send time does: kept for
// later (its time ahead), sent now (its time passed within the grace), or
// refused (its time long past). done is false to send now.
func (s *submission) later(a *approval.Approval, email *Prepared) (Outcome, bool) {
	g := s.g
	at, now := a.Final.SendAt, g.now()
	if !at.After(now) {
		if now.Sub(at) <= g.lateGrace() {
			return Outcome{}, false
		}
		err := fmt.Errorf("its send time %s passed more than %s ago; nothing was sent: ask for a new request with a new send_at", approval.FormatSendAt(at), g.lateGrace())
		return s.end(Failed, err, s.entry(ActionSchedule, audit.ResultError, "Approved/"+a.Name, err.Error())), true
	}
	if g.Scheduler == nil || email == nil {
		err := errors.New("this server cannot keep an email for later (no store for scheduled emails); nothing was sent and the approval stays in Approved/")
		return s.end(Failed, err, s.entry(ActionSchedule, audit.ResultError, "Approved/"+a.Name, err.Error())), true
	}
	bg := context.WithoutCancel(s.ctx)
	claimLine := s.entry(ActionClaim, audit.ResultPending, "Approved/"+a.Name, "claiming; then keeping it to send at "+approval.FormatSendAt(at))
	claimLine.RFC822MessageID = a.Final.OutgoingMessageID
	if err := g.Audit.Record(s.stamp(claimLine)); err != nil {
		return s.end(Failed, fmt.Errorf("writing audit log before scheduling: %w", err), audit.Entry{}), true
	}
	c, err := g.Vault.Claim(s.ctx, a)
	if err != nil {
		if c != nil {
			s.out.DoneFile = c.Name
			s.record(c, approval.Outcome{Status: approval.StatusFailed, Error: "claim incomplete: " + err.Error()})
			return s.end(Failed, err, s.entry(ActionClaim, audit.ResultError, "Done/"+c.Name, err.Error())), true
		}
		if errors.Is(err, approval.ErrAlreadyClaimed) || errors.Is(err, approval.ErrChanged) {
			return s.end(Conflict, err, s.entry(ActionClaim, audit.ResultRejected, "Approved/"+a.Name, err.Error())), true
		}
		return s.end(Failed, err, s.entry(ActionClaim, audit.ResultError, "Approved/"+a.Name, err.Error())), true
	}
	s.out.DoneFile = c.Name
	e := ScheduledEmail{DoneName: c.Name, SendAt: at.UTC(), Final: a.Final, ContentSHA256: a.ContentSHA256, Tool: s.tool, Prepared: *email}
	if err := g.Scheduler.Schedule(bg, e); err != nil {
		err = fmt.Errorf("keeping the email for later: %w; nothing was sent, and this approval is used up: ask for a new request", err)
		s.record(c, approval.Outcome{Status: approval.StatusFailed, Error: err.Error()})
		return s.end(Failed, err, s.entry(ActionSchedule, audit.ResultError, "Done/"+c.Name, err.Error())), true
	}
	if err := c.RecordScheduled(at); err != nil {
		g.logger().Error("recording the schedule", "err", err, "done_file", c.Name)
	}
	le := s.entry(ActionSchedule, audit.ResultSuccess, "Done/"+c.Name, "scheduled for "+approval.FormatSendAt(at)+"; "+hashes(a))
	le.RFC822MessageID = a.Final.OutgoingMessageID
	return s.end(Scheduled, nil, le), true
}

// Later sends the scheduled emails that are due. Every server runs one
// (RunDue on a ticker); any number may run at once over one store and
// vault: the store's claim lets exactly one send each email.
type Later struct {
	Store   LaterStore
	Vault   *approval.Vault
	Limiter *ratelimit.Limiter
	Audit   *audit.Log
	// Send sends raw from the Gmail account named (the email's own,
	// approval.Request.Account; "" the default).
	Send  func(ctx context.Context, account string, raw []byte, threadID string) (SendResult, error)
	Grace time.Duration // DefaultLateGrace when 0
	Now   func() time.Time
	Owner string // who claims (host:pid), for the store's record
	// Ready, when set, is asked before each email is taken, with its
	// account: the email waits for a later pass while it errs, e.g. that
	// account's Gmail not connected yet.
	Ready  func(ctx context.Context, account string) error
	Logger interface {
		Error(msg string, args ...any)
		Info(msg string, args ...any)
	}
}

// LaterStore is the store's side of Later (internal/schedule.Store).
type LaterStore interface {
	// Due lists the emails scheduled at or before now, oldest first.
	Due(ctx context.Context, now time.Time) ([]ScheduledEmail, error)
	// Take moves one from scheduled to taken (sending, or expired), in one
	// transaction: true for exactly one caller across processes.
	Take(ctx context.Context, doneName, state, owner string, now time.Time) (bool, error)
	// Untake puts a taken email back (the send limit was full).
	Untake(ctx context.Context, doneName string) error
	// Finish records the outcome of a taken email.
	Finish(ctx context.Context, doneName, state, detail string, now time.Time) error
}

// Store states of a scheduled email.
const (
	LaterScheduled = "scheduled"
	LaterSending   = "sending"
	LaterSent      = "sent"
	LaterFailed    = "failed"
	LaterUnknown   = "unknown"
	LaterExpired   = "expired"   // its time passed beyond the grace: moved to Rejected/
	LaterCancelled = "cancelled" // withdrawn by the user: moved to Rejected/
)

func (l *Later) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// RunDue sends (or, too late, rejects) every scheduled email whose time has
// come, and returns how many this call sent.
func (l *Later) RunDue(ctx context.Context) (int, error) {
	now := l.now()
	due, err := l.Store.Due(ctx, now)
	if err != nil {
		return 0, err
	}
	grace := l.Grace
	if grace <= 0 {
		grace = DefaultLateGrace
	}
	sent := 0
	for _, e := range due {
		if now.Sub(e.SendAt) > grace {
			l.expire(ctx, e, now, grace)
			continue
		}
		if l.Ready != nil && l.Ready(ctx, e.Final.Account) != nil {
			continue
		}
		ok, err := l.sendOne(ctx, e)
		if err != nil {
			return sent, err
		}
		if ok {
			sent++
		}
	}
	return sent, nil
}

func (l *Later) expire(ctx context.Context, e ScheduledEmail, now time.Time, grace time.Duration) {
	won, err := l.Store.Take(ctx, e.DoneName, LaterExpired, l.Owner, now)
	if err != nil || !won {
		return
	}
	why := fmt.Sprintf("not sent: its send time %s passed %s ago while no mailgate server ran, more than the grace of %s (SEND_LATER_GRACE)",
		approval.FormatSendAt(e.SendAt), now.Sub(e.SendAt).Round(time.Second), grace)
	name, err := l.Vault.Unschedule(e.DoneName, why)
	if err != nil {
		l.log().Error("moving an expired scheduled email to Rejected/", "err", err, "done_file", e.DoneName)
	}
	l.audit(e, ActionSchedule, audit.ResultRejected, "Rejected/"+name, why, SendResult{})
}

// sendOne takes e (if this process wins it), reserves a slot and sends it.
func (l *Later) sendOne(ctx context.Context, e ScheduledEmail) (bool, error) {
	won, err := l.Store.Take(ctx, e.DoneName, LaterSending, l.Owner, l.now())
	if err != nil || !won {
		return false, err
	}
	bg := context.WithoutCancel(ctx)
	var res *ratelimit.Reservation
	if l.Limiter != nil {
		res, err = limiterFor(l.Limiter, e.Final.Account).Reserve(ctx, l.now(), e.DoneName) // the account's own limit
		var le *ratelimit.LimitError
		if errors.As(err, &le) {
			// The window is full: it waits for the next pass.
			if uerr := l.Store.Untake(bg, e.DoneName); uerr != nil {
				return false, uerr
			}
			return false, nil
		}
		if err != nil {
			_ = l.Store.Untake(bg, e.DoneName)
			return false, err
		}
	}
	c, err := l.Vault.ScheduledClaim(e.DoneName, e.Final, e.ContentSHA256)
	if err == nil {
		err = c.MarkSending()
	}
	if err != nil {
		// Withdrawn or unreadable: not sent.
		if res != nil {
			_ = res.Release(bg)
		}
		_ = l.Store.Finish(bg, e.DoneName, LaterFailed, err.Error(), l.now())
		l.audit(e, ActionSend, audit.ResultError, "Done/"+e.DoneName, "scheduled email not sent: "+err.Error(), SendResult{})
		return false, nil
	}
	claimLine := audit.Entry{ActionType: ActionClaim, Result: audit.ResultPending, ApprovalFile: "Done/" + e.DoneName,
		Detail: "sending the email scheduled for " + approval.FormatSendAt(e.SendAt), RFC822MessageID: e.Final.OutgoingMessageID}
	l.record(e, claimLine)
	sr, err := l.Send(ctx, e.Final.Account, e.Raw, e.ThreadID)
	var o approval.Outcome
	state, result := LaterSent, audit.ResultSuccess
	switch {
	case err == nil:
		o = approval.Outcome{Status: approval.StatusSent, SentAt: l.now(), GmailMessageID: sr.MessageID, GmailThreadID: sr.ThreadID}
	case is[NeverReached](err, NeverReached.NeverReached):
		o, state, result = approval.Outcome{Status: approval.StatusFailed, Error: err.Error()}, LaterFailed, audit.ResultError
		if res != nil {
			_ = res.Release(bg)
		}
	case is[Refused](err, Refused.Refused):
		o, state, result = approval.Outcome{Status: approval.StatusFailed, Error: err.Error()}, LaterFailed, audit.ResultError
	default:
		o, state, result = approval.Outcome{Status: approval.StatusUnknown, Error: err.Error()}, LaterUnknown, audit.ResultUnknown
	}
	if rerr := c.Record(o); rerr != nil {
		l.log().Error("recording a scheduled send's outcome", "err", rerr, "done_file", e.DoneName)
	}
	detail := o.Error
	if err == nil {
		detail = "sent at its time " + approval.FormatSendAt(e.SendAt)
	}
	if ferr := l.Store.Finish(bg, e.DoneName, state, detail, l.now()); ferr != nil {
		l.log().Error("recording a scheduled send in the store", "err", ferr, "done_file", e.DoneName)
	}
	l.audit(e, ActionSend, result, "Done/"+e.DoneName, detail, sr)
	return err == nil, nil
}

func (l *Later) audit(e ScheduledEmail, action, result, file, detail string, sr SendResult) {
	l.record(e, audit.Entry{ActionType: action, Result: result, ApprovalFile: file, Detail: detail,
		GmailMessageID: sr.MessageID, GmailThreadID: sr.ThreadID, RFC822MessageID: e.Final.OutgoingMessageID})
}

func (l *Later) record(e ScheduledEmail, en audit.Entry) {
	if l.Audit == nil {
		return
	}
	en.Time, en.Tool, en.Target, en.CorrelationID, en.Account = l.now(), e.Tool, target(e.Final), audit.NewCorrelationID(), e.Final.Account
	if err := l.Audit.Record(en); err != nil {
		l.log().Error("writing audit log", "err", err)
	}
}

type nopLog struct{}

func (nopLog) Error(string, ...any) {}
func (nopLog) Info(string, ...any)  {}

func (l *Later) log() interface {
	Error(msg string, args ...any)
	Info(msg string, args ...any)
} {
	if l.Logger != nil {
		return l.Logger
	}
	return nopLog{}
}

// Run calls RunDue at once and then every interval until ctx ends.
func (l *Later) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := l.RunDue(ctx); err != nil && ctx.Err() == nil {
			l.log().Error("sending scheduled emails", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
