// Package gate is the one path by which a send or reply leaves mailgate. It
// composes the approval vault, the durable send limit and the audit log in a
// fixed order, so no tool can skip or reorder a step:
//
//	validate → DEV_MODE branch → find approval (none: compose the email as
//	the new request file describes it, then write the file) → compose the
//	final email → reserve a slot → audit "claim" → claim the approval (rename into Done/) →
//	call Gmail → record the outcome in the Done file → give the slot back
//	only if Google provably never received the request → audit the outcome
//
// The approved file is the source of truth: when the human corrected the
// subject or body before approving, the correction is what is composed and
// sent (approval.Approval.Final), the agent's identical call being only the
// trigger; the agent is told, with the final text.
//
// Sends are at most once. The approval is consumed before Gmail is called
// and whatever happens afterwards, so a retry, a crash or a concurrent call
// cannot send the same approval twice; a failed send needs a new approval.
// The slot is reserved before the claim, so a send is counted even if the
// process dies while Gmail answers.
//
// # Crash states
//
// What a SIGKILL (or power loss, for the fsynced steps) after each step
// leaves, and why it is safe:
//
//	after                    state                                            consequence
//	Find / Request           at most a request file (atomic), or a refused   the call is simply repeated
//	                         approval moved to Rejected/ (status written
//	                         after the move; "rejected" until then)
//	Reserve                  slot held, approval still in Approved/           the window over-counts by one for an hour;
//	                                                                          the next identical call reserves and sends
//	audit "claim"            audit line "pending", approval in Approved/      nothing claimed: the next identical call
//	                                                                          sends it (the slot over-counts by one)
//	ledger Consume           slot held, approval in Approved/ but consumed    refused as "already used"; nothing sent;
//	                                                                          a new request is written
//	rename into Done/        Done file (status as moved), approval gone       never reusable; nothing sent, but
//	                                                                          indistinguishable from the next row: unknown
//	Gmail call               Done status still as moved; Google may have it   unknown: check Sent; never retried
//	Record                   Done status sent / failed / unknown              the outcome audit line may be missing;
//	                                                                          the Done file has it
//	Release (NeverReached)   Done status failed, slot possibly still held     over-counts by one: conservative
//
// Every attempt has a fsynced audit "claim" line written before the
// approval is claimed, so every consumed approval and every Gmail call has
// one; if that line cannot be written nothing is claimed or sent.
package gate

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/warnings"
)

// SendResult is what Gmail answered to a send.
type SendResult struct{ MessageID, ThreadID string }

// SendFunc performs the Gmail call. It is called at most once per Submit,
// and never retried by the gate. Its error tells the gate what Google saw:
// see NeverReached and Refused; any other error means "may have been sent".
type SendFunc func(ctx context.Context) (SendResult, error)

// NeverReached is implemented by send errors that prove the request never
// reached Google (e.g. the connection was refused, or the request could not
// be built). Only then is the slot given back.
type NeverReached interface{ NeverReached() bool }

// Refused is implemented by send errors where Google answered that it did
// not send the email (a definitive 4xx such as 400 or 403). The outcome is
// recorded as failed rather than unknown; the slot is kept, because Google
// did receive the request.
type Refused interface{ Refused() bool }

// Audit action types written by the gate (the MCP layer writes its own
// per-tool-call line with action_type = the tool name).
const (
	ActionValidate  = "gate_validate"
	ActionDevMode   = "gate_dev_mode"
	ActionApproval  = "gate_approval"
	ActionRateLimit = "gate_rate_limit"
	ActionClaim     = "gate_claim"
	ActionSend      = "gate_send"
	ActionSettle    = "gate_settle" // an unknown outcome decided later (settle.go)
)

// ComposeFunc builds what the final request describes (an email: the
// agent's request, or the human's correction of it) and returns it with the
// call that performs it. Run calls it once: with the matched approval's
// final request, before anything is reserved or claimed, so a build
// failure consumes nothing; or, with no approval, with the request as the
// new request file describes it (its Message-ID included), before the file
// is written, so a request that could never be sent writes no file.
type ComposeFunc func(final approval.Request) (Composed, error)

// Composed is what a ComposeFunc built: the call that performs it, and for
// an email the email itself, built whole: the bytes Send sends, or that a
// scheduled send keeps (later.go).
type Composed struct {
	Send  SendFunc
	Email *Prepared // nil for the actions that are not an email
}

// Call is one send or reply submitted to the gate.
type Call struct {
	Tool    string // the MCP tool name, for the audit log
	Request approval.Request
	Compose ComposeFunc
	// Warnings, when set, adds what the caller knows about the email (a
	// Reply-To elsewhere, a recipient never written to) to a new request
	// file. It is called only when a request file is written.
	Warnings func(ctx context.Context) []warnings.Warning
	// Original, when set, reads the message a reply answers or a forward
	// forwards, kept beside a new request for the approver (not hashed:
	// approval.Original). Called only when a request file is written.
	Original func(ctx context.Context) *approval.Original
}

// Gate runs sends and replies through the approval protocol. Vault and
// Limiter are required; Audit, Now and Logger may be nil.
type Gate struct {
	Vault   *approval.Vault
	Limiter *ratelimit.Limiter
	Audit   *audit.Log
	DevMode bool
	Now     func() time.Time
	Logger  *slog.Logger
	// Sent, when set, looks an email up in the mailbox by its Message-ID
	// (gmail.Client.FindRFC822): how unknown outcomes are settled
	// (Settle), and how an approval whose Message-ID an earlier,
	// unsettled copy already carried is checked before it is sent.
	Sent SentLookup
	// SettleGrace is how long after its claim an email not found in Sent
	// is still given to appear there before it is recorded as not sent
	// (default DefaultSettleGrace).
	SettleGrace time.Duration
	// Scheduler keeps approved emails with a send time ahead (later.go);
	// LateGrace is how long after its time one is still sent
	// (DefaultLateGrace when 0).
	Scheduler Scheduler
	LateGrace time.Duration
}

// SentLookup finds an email in the mailbox's Sent (trash included); found
// is false when it is not there.
type SentLookup func(ctx context.Context, q SentQuery) (r SendResult, found bool, err error)

// SentQuery is what identifies one email in Sent: its Message-ID first;
// then, because Gmail may replace the Message-ID of an API send, the sent
// message to the first recipient with this subject since After.
type SentQuery struct {
	Account     string // the Gmail account whose Sent is asked ("": the default)
	MessageID   string
	To, Subject string
	After       time.Time
}

// Status is how a Submit ended.
type Status int

const (
	Sent               Status = iota + 1 // Gmail accepted the email
	AwaitingApproval                     // no approval; a request file is in Pending_Approval/
	RejectedByApprover                   // the request is in Rejected/
	RateLimited                          // the window is full; the approval stays in Approved/
	DevMode                              // DEV_MODE: checked and logged, nothing sent
	Failed                               // not sent (before or at Gmail); see Err
	Unknown                              // Gmail may or may not have sent it; not retried
	Conflict                             // another call claimed the approval first, or it changed
	Invalid                              // the request failed validation
	Backlog                              // too many requests are waiting; none written
	Scheduled                            // approved and kept to be sent at its time (later.go)
)

var statusNames = [...]string{"unset", "sent", "awaiting_approval", "rejected_by_approver", "rate_limited",
	"dev_mode", "failed", "unknown", "conflict", "invalid", "backlog", "scheduled"}

// OK reports an outcome the agent is not told to stop at: the email was sent,
// or DEV_MODE checked it. Every other status is a refusal or an error.
func (s Status) OK() bool { return s == Sent || s == DevMode || s == Scheduled }

// AuditResult is the result the tool call's own audit line records for an
// outcome of this status: derived from the typed outcome, never from the
// text the agent is given, so rewording an answer cannot change the log.
func (s Status) AuditResult() string {
	switch s {
	case Sent, Scheduled:
		return audit.ResultSuccess
	case DevMode:
		return audit.ResultDevMode
	case RateLimited:
		return audit.ResultRateLimited
	case AwaitingApproval, RejectedByApprover, Backlog, Conflict:
		return audit.ResultRejected
	case Unknown:
		return audit.ResultUnknown
	}
	return audit.ResultError // Invalid, Failed, unset
}

func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return fmt.Sprintf("Status(%d)", int(s))
	}
	return statusNames[s]
}

// Outcome reports a Submit. Message renders it for the agent.
type Outcome struct {
	Status      Status
	Kind        approval.Kind
	Target      string // masked recipient or "thread:<id>", as audited
	Subject     string // for the DEV_MODE text
	BodyChars   int    // for the DEV_MODE reply text
	PendingFile string // name in Pending_Approval/ (AwaitingApproval; DEV_MODE without approval)
	// Pending is the request file written or found (its absolute path,
	// warnings, and the earlier consumed copy of this email, if any).
	Pending    *approval.Pending
	Request    approval.Request // as the agent asked
	Mode       approval.Mode    // the vault's approval mode, which the refusal names
	Approval   *approval.Approval
	DoneFile   string // name in Done/ once the approval was consumed
	RetryAfter time.Duration
	Limit      int
	Result     SendResult
	// AlreadyInSent: the approval's email was found in Sent before it was
	// sent (an earlier copy whose outcome was not known had left), so it
	// was recorded as sent and not sent again.
	AlreadyInSent bool
	Err           error
	// DEV_MODE only: what would have happened.
	DevApprovalFound bool
	DevRejected      bool
	DevLimitOK       bool
	DevLogPath       string
	CorrelationID    string
}

// ErrCannotSendEdited is the Compose error of Submit's callers, which can
// only send exactly what the agent asked: an approval the human corrected
// stays in Approved/ for a caller that can.
var ErrCannotSendEdited = errors.New("the approver corrected this email, and this caller can only send it as first asked")

// Submit runs req through the gate with a send that sends exactly req; an
// approval the human corrected is not used (ErrCannotSendEdited). See Run.
func (g *Gate) Submit(ctx context.Context, tool string, req approval.Request, send SendFunc) Outcome {
	return g.Run(ctx, Call{Tool: tool, Request: req, Compose: Exactly(req, send)})
}

// Exactly is the ComposeFunc of an action that can only do exactly req, as
// first asked (a draft sent as it is in Gmail, a trash, a settings change):
// send, for req itself; ErrCannotSendEdited for an approval the human
// corrected.
func Exactly(req approval.Request, send SendFunc) ComposeFunc {
	return func(final approval.Request) (Composed, error) {
		if !final.Same(req) {
			return Composed{}, ErrCannotSendEdited
		}
		return Composed{Send: send}, nil
	}
}

// Run runs c through the gate; the composed send is called at most once,
// and only with a claimed approval outside DEV_MODE. The correlation id
// comes from ctx (audit.WithCorrelationID) or is generated.
func (g *Gate) Run(ctx context.Context, c Call) Outcome {
	tool, req := c.Tool, c.Request
	s := &submission{g: g, ctx: ctx, tool: tool, req: req, call: c, start: g.now()}
	s.cid = audit.CorrelationID(ctx)
	if s.cid == "" {
		s.cid = audit.NewCorrelationID()
	}
	s.out = Outcome{Kind: req.Kind, Target: target(req), Subject: req.Subject, Request: req,
		BodyChars: utf8.RuneCountInString(req.Body), CorrelationID: s.cid, Mode: g.Vault.Mode()}
	if err := req.Validate(); err != nil {
		detail := "invalid request"
		var ve *approval.ValidationError
		if errors.As(err, &ve) {
			detail = "invalid " + ve.Field
		}
		return s.end(Invalid, err, audit.Entry{ActionType: ActionValidate, Result: audit.ResultError, Detail: detail})
	}
	if g.DevMode {
		return s.dev()
	}
	return s.live()
}

// DirectCall is a write that needs no approval (a Gmail draft): nothing
// leaves the mailbox, so no approval, slot or claim is involved, but DEV_MODE
// still holds, and it is decided here, in the gate, as for a send.
type DirectCall struct {
	Tool string
	// Request is what the DEV_MODE log records; its Kind names the write
	// ("email_draft") and need not be an approval kind.
	Request approval.Request
	Note    string   // the DEV_MODE log's note
	Do      SendFunc // the write; its SendResult.MessageID is the id it made
}

// Direct runs c.Do once, or in DEV_MODE writes c.Request to the vault's
// DEV_MODE log and runs nothing. The outcome is Sent (done; Result holds
// what Do answered), DevMode, or Failed with Err. The caller validated the
// email (mailmsg.Validate) and audits the call.
func (g *Gate) Direct(ctx context.Context, c DirectCall) Outcome {
	req := c.Request
	out := Outcome{Kind: req.Kind, Target: target(req), Subject: req.Subject, Request: req,
		BodyChars: utf8.RuneCountInString(req.Body), CorrelationID: audit.CorrelationID(ctx)}
	if g.DevMode {
		path, err := g.Vault.DevLog(req, c.Note)
		if err != nil {
			// Nothing is created either way; the log is the human's copy
			// of what was asked, so a failure to write it is logged.
			g.logger().Error("writing DEV_MODE log", "err", err, "tool", c.Tool)
		}
		out.Status, out.DevLogPath = DevMode, path
		return out
	}
	sr, err := c.Do(ctx)
	if err != nil {
		out.Status, out.Err = Failed, err
		return out
	}
	out.Status, out.Result = Sent, sr
	return out
}

// submission carries one Submit's state.
type submission struct {
	g     *Gate
	ctx   context.Context
	tool  string
	req   approval.Request
	call  Call
	start time.Time
	cid   string
	out   Outcome
}

func (s *submission) live() Outcome {
	g, ctx := s.g, s.ctx
	a, err := g.Vault.Find(ctx, s.req)
	if out, done := s.afterFind(a, err); done {
		return out
	}
	s.out.Approval = a
	if a.Final.OutgoingMessageID == "" && !a.Final.Kind.IsAction() {
		// A hand-written approval names no Message-ID: one is fixed now,
		// and audited with the claim, so Sent can still settle it.
		a.Final.OutgoingMessageID = "<" + strings.ToLower(rand.Text()) + "@mailgate.local>"
	}
	composed, err := s.call.Compose(a.Final)
	if err != nil {
		return s.end(Failed, err, s.entry(ActionApproval, audit.ResultError, "Approved/"+a.Name, "composing the approved email: "+err.Error()))
	}
	if !a.Final.SendAt.IsZero() {
		if out, done := s.later(a, composed.Email); done { // later.go
			return out
		}
	}
	res, err := g.reserve(ctx, a)
	var le *ratelimit.LimitError
	if errors.As(err, &le) {
		s.out.RetryAfter, s.out.Limit = le.RetryAfter, le.Limit
		return s.end(RateLimited, err, s.entry(ActionRateLimit, audit.ResultRateLimited, "Approved/"+a.Name, le.Error()))
	}
	if err != nil {
		return s.end(Failed, err, s.entry(ActionRateLimit, audit.ResultError, "Approved/"+a.Name, err.Error()))
	}
	bg := context.WithoutCancel(ctx) // bookkeeping must finish even if the caller gave up
	// An approval carrying the Message-ID of an earlier copy whose outcome
	// is not known asks Sent first: if that copy left, this one is
	// recorded as sent and nothing goes out a second time.
	var already *SendResult
	if a.MessageIDInherited && g.Sent != nil {
		r, found, err := g.Sent(ctx, SentQuery{Account: a.Final.Account, MessageID: a.Final.OutgoingMessageID, To: a.Final.Address(), Subject: a.Final.Subject,
			After: g.now().Add(-2 * g.Vault.TTL())})
		if err != nil {
			s.release(bg, res)
			err = fmt.Errorf("checking Sent for an earlier copy of this email before sending it: %w; nothing was sent and the approval stays in Approved/", err)
			return s.end(Failed, err, s.entry(ActionApproval, audit.ResultError, "Approved/"+a.Name, err.Error()))
		}
		if found {
			already = &r
		}
	}
	// The attempt is audited (fsynced) before the claim, so that every
	// consumed approval, even one whose process dies right after the
	// rename, has its line, and no send happens without one.
	claimLine := s.entry(ActionClaim, audit.ResultPending, "Approved/"+a.Name, "claiming; then calling Gmail")
	claimLine.RFC822MessageID = a.Final.OutgoingMessageID
	if err := g.Audit.Record(s.stamp(claimLine)); err != nil {
		s.g.logger().Error("writing audit log before claiming; not sending", "err", err, "correlation_id", s.cid)
		s.release(bg, res)
		return s.end(Failed, fmt.Errorf("writing audit log before sending: %w", err), audit.Entry{})
	}
	c, err := g.Vault.Claim(ctx, a)
	if err != nil {
		s.release(bg, res)
		if c != nil {
			// Moved into Done/ but not durable or not marked: do not send.
			s.out.DoneFile = c.Name
			s.record(c, approval.Outcome{Status: approval.StatusFailed, Error: "claim incomplete: " + err.Error()})
			return s.end(Failed, err, s.entry(ActionClaim, audit.ResultError, "Done/"+c.Name, err.Error()))
		}
		if errors.Is(err, approval.ErrAlreadyClaimed) || errors.Is(err, approval.ErrChanged) {
			return s.end(Conflict, err, s.entry(ActionClaim, audit.ResultRejected, "Approved/"+a.Name, err.Error()))
		}
		return s.end(Failed, err, s.entry(ActionClaim, audit.ResultError, "Approved/"+a.Name, err.Error()))
	}
	s.out.DoneFile = c.Name
	if already != nil {
		s.out.Result, s.out.AlreadyInSent = *already, true
		s.release(bg, res) // nothing was sent now
		s.record(c, approval.Outcome{Status: approval.StatusSent, SentAt: g.now(), GmailMessageID: already.MessageID, GmailThreadID: already.ThreadID,
			Error: ""})
		e := s.entry(ActionSend, audit.ResultSuccess, "Done/"+c.Name, "already in Sent (Message-ID "+a.Final.OutgoingMessageID+"): an earlier copy left; not sent again; "+hashes(a))
		e.GmailMessageID, e.GmailThreadID, e.RFC822MessageID = already.MessageID, already.ThreadID, a.Final.OutgoingMessageID
		return s.end(Sent, nil, e)
	}
	sr, err := callSend(ctx, composed.Send)
	switch {
	case err == nil:
		s.out.Result = sr
		s.record(c, approval.Outcome{Status: approval.StatusSent, SentAt: g.now(), GmailMessageID: sr.MessageID, GmailThreadID: sr.ThreadID})
		e := s.entry(ActionSend, audit.ResultSuccess, "Done/"+c.Name, hashes(a))
		e.GmailMessageID, e.GmailThreadID, e.RFC822MessageID = sr.MessageID, sr.ThreadID, a.Final.OutgoingMessageID
		return s.end(Sent, nil, e)
	case is[NeverReached](err, NeverReached.NeverReached):
		s.record(c, approval.Outcome{Status: approval.StatusFailed, Error: err.Error()})
		s.release(bg, res)
		return s.end(Failed, err, s.entry(ActionSend, audit.ResultError, "Done/"+c.Name, "never reached Google: "+err.Error()+"; "+hashes(a)))
	case is[Refused](err, Refused.Refused):
		s.record(c, approval.Outcome{Status: approval.StatusFailed, Error: err.Error()})
		return s.end(Failed, err, s.entry(ActionSend, audit.ResultError, "Done/"+c.Name, "refused by Google: "+err.Error()+"; "+hashes(a)))
	default:
		s.record(c, approval.Outcome{Status: approval.StatusUnknown, Error: err.Error()})
		return s.end(Unknown, err, s.entry(ActionSend, audit.ResultUnknown, "Done/"+c.Name, "may have been sent: "+err.Error()+"; "+hashes(a)))
	}
}

// afterFind handles every Find result but a match.
func (s *submission) afterFind(a *approval.Approval, err error) (Outcome, bool) {
	var re *approval.RejectedError
	switch {
	case err == nil:
		return Outcome{}, false
	case errors.As(err, &re):
		detail := "rejected by the approver"
		if re.Refused {
			detail = "refused: " + re.Reason
		}
		return s.end(RejectedByApprover, err, s.entry(ActionApproval, audit.ResultRejected, "Rejected/"+re.Name, detail)), true
	case errors.Is(err, approval.ErrNoApproval):
		// An earlier copy of this email whose outcome is not known is
		// settled first, so the request (and the answer) says whether it left.
		s.g.settleQuietly(s.ctx, s.req.SHA256())
		p, perr := s.request()
		if perr != nil {
			return s.requestFailed(perr, ActionValidate, ActionApproval), true
		}
		detail := "awaiting approval; " + err.Error()
		if p.Earlier.Repeat() {
			detail = "awaiting approval of a repeat of Done/" + p.Earlier.Name + " (" + p.Earlier.Status + "); " + err.Error()
		}
		return s.end(AwaitingApproval, err, s.entry(ActionApproval, audit.ResultRejected, "Pending_Approval/"+p.Name, detail)), true
	default:
		return s.end(Failed, err, s.entry(ActionApproval, audit.ResultError, "", err.Error())), true
	}
}

// dev runs DEV_MODE: the same checks, nothing claimed, reserved or sent.
func (s *submission) dev() Outcome {
	g, ctx := s.g, s.ctx
	a, err := g.Vault.Find(ctx, s.req)
	s.out.Approval, s.out.DevApprovalFound = a, err == nil
	s.out.DevRejected = errors.Is(err, approval.ErrRejected)
	approvalNote := "found (Approved/" + nameOf(a) + ")"
	switch {
	case err == nil:
		// Built as it would be sent, and not sent.
		if _, err := s.call.Compose(a.Final); err != nil {
			return s.end(Failed, err, s.entry(ActionDevMode, audit.ResultError, approvalFile(a), "composing the approved email: "+err.Error()))
		}
	case s.out.DevRejected:
		approvalNote = "rejected by the approver"
	case errors.Is(err, approval.ErrNoApproval):
		p, perr := s.request()
		if perr != nil {
			return s.requestFailed(perr, ActionDevMode, ActionDevMode)
		}
		approvalNote = "none (request written to Pending_Approval/" + p.Name + ")"
	default:
		return s.end(Failed, err, s.entry(ActionDevMode, audit.ResultError, "", err.Error()))
	}
	retry, err := g.check(ctx, s.req)
	if err != nil {
		return s.end(Failed, err, s.entry(ActionDevMode, audit.ResultError, "", err.Error()))
	}
	s.out.DevLimitOK, s.out.RetryAfter, s.out.Limit = retry == 0, retry, g.Limiter.Limit()
	limitNote := "ok"
	if retry > 0 {
		limitNote = (&ratelimit.LimitError{Limit: g.Limiter.Limit(), Window: g.Limiter.Window(), RetryAfter: retry}).Error()
	}
	note := "approval: " + approvalNote + "; rate limit: " + limitNote
	path, err := g.Vault.DevLog(s.req, note)
	if err != nil {
		return s.end(Failed, err, s.entry(ActionDevMode, audit.ResultError, "", err.Error()))
	}
	s.out.DevLogPath = path
	return s.end(DevMode, nil, s.entry(ActionDevMode, audit.ResultDevMode, approvalFile(a), note))
}

// request writes (or finds) the request file, with the caller's warnings.
// A new file's email is composed first, as the file describes it: a
// *composeError (nothing written) when it cannot be built.
func (s *submission) request() (*approval.Pending, error) {
	var extra []warnings.Warning
	if s.call.Warnings != nil {
		extra = s.call.Warnings(s.ctx)
	}
	req := s.req
	if s.call.Original != nil {
		req.Original = s.call.Original(s.ctx)
	}
	p, err := s.g.Vault.RequestChecked(s.ctx, req, extra, func(written approval.Request) error {
		if _, err := s.call.Compose(written); err != nil {
			return &composeError{err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.out.Pending, s.out.PendingFile = p, p.Name
	return p, nil
}

// requestFailed ends a submission whose request could not be written
// (request's error): an email that cannot be built is Invalid (audited as
// invalidAction), a vault at its backlog limit is Backlog, anything else
// Failed (audited as action).
func (s *submission) requestFailed(err error, invalidAction, action string) Outcome {
	var be *approval.BacklogError
	var ce *composeError
	switch {
	case errors.As(err, &ce):
		return s.end(Invalid, ce.err, s.entry(invalidAction, audit.ResultError, "", "the email cannot be built: "+ce.err.Error()))
	case errors.As(err, &be):
		return s.end(Backlog, err, s.entry(action, audit.ResultRejected, "", err.Error()))
	}
	return s.end(Failed, err, s.entry(action, audit.ResultError, "", err.Error()))
}

// composeError is a request whose email cannot be built (too large, a file
// changed while it was read): refused as invalid, no request file written.
type composeError struct{ err error }

func (e *composeError) Error() string { return e.err.Error() }
func (e *composeError) Unwrap() error { return e.err }

// hashes is the audit detail that ties a send to the request the agent made
// and to what was sent, which differ when the approver corrected it.
func hashes(a *approval.Approval) string {
	d := "original_sha256=" + a.ContentSHA256 + " final_sha256=" + a.Final.SHA256()
	if len(a.Edited) > 0 {
		d += " edited_by_approver=" + strings.Join(a.Edited, ",")
	}
	return d
}

// entry builds an audit entry for this submission.
func (s *submission) entry(action, result, file, detail string) audit.Entry {
	e := audit.Entry{ActionType: action, Result: result, ApprovalFile: file, Detail: detail}
	if a := s.out.Approval; a != nil {
		e.ApprovalSHA256 = a.SHA256
	}
	return e
}

// stamp fills the fields every entry of this submission shares.
func (s *submission) stamp(e audit.Entry) audit.Entry {
	now := s.g.now()
	e.Time, e.CorrelationID, e.Tool, e.Target, e.Account = now, s.cid, s.tool, s.out.Target, s.req.Account
	e.DurationMS = now.Sub(s.start).Milliseconds()
	return e
}

// end writes the final audit entry (unless e is empty) and returns the
// outcome.
func (s *submission) end(st Status, err error, e audit.Entry) Outcome {
	s.out.Status, s.out.Err = st, err
	if e.ActionType != "" {
		if aerr := s.g.Audit.Record(s.stamp(e)); aerr != nil {
			s.g.logger().Error("writing audit log", "err", aerr, "correlation_id", s.cid, "status", st.String())
		}
	}
	return s.out
}

func (s *submission) record(c *approval.Claim, o approval.Outcome) {
	if err := c.Record(o); err != nil {
		s.g.logger().Error("recording send outcome", "err", err, "done_file", c.Name, "status", o.Status, "correlation_id", s.cid)
	}
}

func (s *submission) release(ctx context.Context, r *ratelimit.Reservation) {
	if r == nil { // a kind that takes no slot (reserve)
		return
	}
	if err := r.Release(ctx); err != nil {
		s.g.logger().Error("releasing send slot", "err", err, "correlation_id", s.cid)
	}
}

// callSend runs send, turning a panic into an error of unknown outcome.
func callSend(ctx context.Context, send SendFunc) (sr SendResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("send panicked: %v", r)
		}
	}()
	return send(ctx)
}

// is reports whether err (or an error it wraps) implements I and says yes.
func is[I any](err error, yes func(I) bool) bool {
	var i I
	return errors.As(err, &i) && yes(i)
}

func (g *Gate) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Gate) logger() *slog.Logger {
	if g.Logger != nil {
		return g.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func target(req approval.Request) string {
	if req.Kind.IsAction() {
		return actionTarget(req) // action.go
	}
	if req.Kind == approval.KindReply {
		return "thread:" + req.ThreadID
	}
	to := req.To
	if to == "" && len(req.ToList) > 0 {
		to = req.ToList[0]
	}
	return audit.MaskAddress(to)
}

func refFor(a *approval.Approval) string {
	if a.RequestID != "" {
		return a.RequestID
	}
	return a.Name
}

func nameOf(a *approval.Approval) string {
	if a == nil {
		return ""
	}
	return a.Name
}

func approvalFile(a *approval.Approval) string {
	if a == nil {
		return ""
	}
	return "Approved/" + a.Name
}
