package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/audit"
)

// DefaultSettleGrace is how long after its claim an email is given to show
// up in Sent before its absence means it never left. Gmail lists a sent
// message at once; the margin covers a send still in flight in another
// process.
const DefaultSettleGrace = 10 * time.Minute

// Settled reports a Settle run.
type Settled struct {
	Sent, NotSent int      // decided now
	Open          int      // still unknown (not in Sent yet, or Sent could not be asked)
	Texts         []string // one plain line per file decided, for the human
}

// Settle decides the Done files whose outcome is not known (a process
// stopped between the claim and the record, or Gmail's answer was lost):
// every one (sha "") or those of the email whose content hash is sha. The
// witnesses, in order:
//
//  1. the audit log: the send's line (success, or a definite failure) for
//     that Done file, written when the file itself could not be (a full
//     disk);
//  2. Sent: the email found by its Message-ID (the Done file's
//     outgoing_message_id, or the one its audit claim line fixed) is
//     recorded as sent with Gmail's id; not found SettleGrace after the
//     claim, as not sent.
//
// Each decision rewrites the Done file and adds a gate_settle audit line.
func (g *Gate) Settle(ctx context.Context, sha string) (Settled, error) {
	var out Settled
	us, err := g.Vault.Unsettled(sha)
	if err != nil || len(us) == 0 {
		return out, err
	}
	entries, err := g.auditEntries()
	if err != nil {
		g.logger().Warn("reading the audit log to settle unknown outcomes", "err", err)
	}
	grace := g.SettleGrace
	if grace <= 0 {
		grace = DefaultSettleGrace
	}
	var errs []error
	for _, u := range us {
		o, by, decided := fromAudit(u, entries)
		if !decided {
			if u.MessageID == "" {
				u.MessageID = claimedMessageID(u, entries)
				u.Final.OutgoingMessageID = u.MessageID
			}
			// A trash or send_draft action has no Message-ID of mailgate's:
			// only the audit log can settle it.
			if u.MessageID == "" || g.Sent == nil || u.Final.Kind.IsAction() {
				out.Open++
				continue
			}
			r, found, err := g.Sent(ctx, SentQuery{Account: u.Final.Account, MessageID: u.MessageID, To: u.Final.Address(), Subject: u.Final.Subject, After: u.ClaimedAt.Add(-time.Minute)})
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("looking Done/%s up in Sent: %w", u.Name, err))
				out.Open++
				continue
			case found:
				o, by = approval.Outcome{Status: approval.StatusSent, SentAt: g.now(), GmailMessageID: r.MessageID, GmailThreadID: r.ThreadID}, approval.SettledBySent
			case !u.ClaimedAt.IsZero() && g.now().Sub(u.ClaimedAt) >= grace:
				o = approval.Outcome{Status: approval.StatusFailed, Error: fmt.Sprintf("not in Sent %s after it was claimed (Message-ID %s): it was not sent",
					g.now().Sub(u.ClaimedAt).Round(time.Minute), u.MessageID)}
				by = approval.SettledAbsent
			default:
				out.Open++
				continue
			}
		}
		if err := g.Vault.Settle(u, o, by); err != nil {
			errs = append(errs, fmt.Errorf("settling Done/%s: %w", u.Name, err))
			out.Open++
			continue
		}
		result, detail := audit.ResultSuccess, "outcome settled: sent ("+string(by)+")"
		if o.Status == approval.StatusSent {
			out.Sent++
			out.Texts = append(out.Texts, fmt.Sprintf("Done/%s: it was sent (Gmail message %s); recorded now from the %s.", u.Name, o.GmailMessageID, witness(by)))
		} else {
			out.NotSent++
			result, detail = audit.ResultError, "outcome settled: not sent ("+string(by)+")"
			out.Texts = append(out.Texts, fmt.Sprintf("Done/%s: it was NOT sent (%s). The agent's next identical call writes a new request.", u.Name, o.Error))
		}
		e := audit.Entry{Time: g.now(), CorrelationID: audit.NewCorrelationID(), Tool: "settle", ActionType: ActionSettle, Result: result,
			ApprovalFile: "Done/" + u.Name, ApprovalSHA256: u.ApprovalSHA256, GmailMessageID: o.GmailMessageID, GmailThreadID: o.GmailThreadID,
			RFC822MessageID: u.MessageID, Detail: detail}
		if err := g.Audit.Record(e); err != nil {
			g.logger().Error("writing audit log", "err", err, "done_file", u.Name)
		}
		g.logger().Info("settled an unknown send outcome", "done_file", u.Name, "status", o.Status, "by", string(by))
	}
	return out, errors.Join(errs...)
}

func witness(by approval.Settlement) string {
	if by == approval.SettledByAudit {
		return "audit log"
	}
	return "Sent folder (found by its Message-ID)"
}

// settleQuietly settles the earlier copies of one email before a request
// for it is written, logging what fails: the request is written either way.
func (g *Gate) settleQuietly(ctx context.Context, sha string) {
	if _, err := g.Settle(ctx, sha); err != nil {
		g.logger().Warn("settling earlier copies of this email", "err", err)
	}
}

func (g *Gate) auditEntries() ([]audit.Entry, error) {
	dir := g.Audit.Dir()
	if dir == "" {
		return nil, nil
	}
	es, err := audit.ReadDir(dir)
	var te *audit.TornError
	if errors.As(err, &te) {
		err = nil // a torn line is skipped; every whole one is here
	}
	return es, err
}

// fromAudit finds the send line the gate wrote for u's Done file: a
// success, or a definite failure (never reached or refused by Google). An
// unknown result decides nothing.
func fromAudit(u approval.Unsettled, entries []audit.Entry) (approval.Outcome, approval.Settlement, bool) {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.ActionType != ActionSend || e.ApprovalFile != "Done/"+u.Name {
			continue
		}
		switch e.Result {
		case audit.ResultSuccess:
			return approval.Outcome{Status: approval.StatusSent, SentAt: e.Time, GmailMessageID: e.GmailMessageID, GmailThreadID: e.GmailThreadID},
				approval.SettledByAudit, true
		case audit.ResultError:
			return approval.Outcome{Status: approval.StatusFailed, Error: e.Detail}, approval.SettledByAudit, true
		}
	}
	return approval.Outcome{}, "", false
}

// claimedMessageID is the Message-ID the audit claim line of u fixed (a
// hand-written approval has none in its file).
func claimedMessageID(u approval.Unsettled, entries []audit.Entry) string {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.ActionType == ActionClaim && e.ApprovalSHA256 == u.ApprovalSHA256 && e.RFC822MessageID != "" {
			return e.RFC822MessageID
		}
	}
	return ""
}
