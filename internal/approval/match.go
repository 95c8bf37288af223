package approval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/account"
)

// matcher evaluates candidate files in Approved/ against one call.
type matcher struct {
	v    *Vault
	ctx  context.Context
	req  Request
	sha  string // req.SHA256()
	addr string // req's bare address, lower case ("" for a reply without To)
	now  time.Time
}

// refusal is a candidate mailgate must take out of Approved/: an issued
// request for this email whose recipient or thread the human changed.
type refusal struct {
	name   string
	sha    string // the file's hash as read: it is only refused if unchanged
	reason string
}

// try reads Approved/<name> and returns the approval when it matches, a
// refusal, or the reason it does not match. err is reserved for failures
// that must stop the search (the ledger being unreachable); unreadable
// files are reasons.
func (m *matcher) try(name string) (*Approval, string, *refusal, error) {
	data, mtime, err := readRegular(m.v.path(DirApproved, name), m.v.o.MaxFileSize)
	switch {
	case errors.Is(err, errSkipped):
		return nil, invalidText(err.Error()), nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, "gone", nil, nil
	case err != nil:
		// ELOOP for a symlink (O_NOFOLLOW) lands here too.
		return nil, invalidText(err.Error()), nil, nil
	}
	p, err := parseApproval(data)
	if err != nil {
		return nil, invalidText(err.Error()), nil, nil
	}
	a := &Approval{
		Path:          m.v.path(DirApproved, name),
		Name:          name,
		Kind:          m.req.Kind,
		RequestID:     strings.TrimSpace(p.RequestID),
		ContentSHA256: strings.ToLower(strings.TrimSpace(p.ContentSHA256)),
		SHA256:        sum(data),
		Final:         m.req,
	}
	sha := a.ContentSHA256
	if sha == "" {
		sha = m.sha
	}
	a.Final.OutgoingMessageID, a.MessageIDInherited = approvalMessageID(p, a.RequestID, sha)
	if m.v.o.Mode == ModeRecipient {
		exp, reason := m.checkRecipientMode(p, mtime)
		if reason != "" {
			return nil, reason, nil, nil
		}
		a.Expires = exp
		return a, "", nil, nil
	}
	exp, reason := m.checkCommon(p, mtime)
	if reason != "" {
		return nil, reason, nil, nil
	}
	a.Expires = exp
	issued := false
	if m.v.o.Ledger != nil {
		ok, err := m.v.o.Ledger.Issued(m.ctx, a.RequestID, a.ContentSHA256)
		if err != nil {
			return nil, "", nil, fmt.Errorf("checking request ledger: %w", err)
		}
		if !ok {
			if used := m.v.usedAs(a.RequestID); used != "" {
				return nil, "a copy of an approval already used (" + DirDone + "/" + used + ")", nil, nil
			}
			return nil, "mailgate has no record of issuing it (written or altered by hand)", nil, nil
		}
		issued = true
	}
	if r := bindingChange(p, m.req); r != "" {
		if issued {
			return nil, r, &refusal{name: name, sha: a.SHA256, reason: r}, nil
		}
		return nil, r, nil, nil
	}
	if p.Subject != m.req.Subject {
		a.Edited = append(a.Edited, "subject")
	}
	if p.Body != normalizeNewlines(m.req.Body) {
		a.Edited = append(a.Edited, "body")
	}
	if len(a.Edited) == 0 {
		return a, "", nil, nil
	}
	if !issued {
		// Without a ledger nothing proves the file began as mailgate's
		// request for this email, so it must say exactly what was asked.
		return nil, strings.Join(a.Edited, " and ") + " differs", nil, nil
	}
	if r := actionEdited(m.req.Kind, a.Edited); r != "" { // kind_action.go
		return nil, r, &refusal{name: name, sha: a.SHA256, reason: r}, nil
	}
	a.Final.Subject, a.Final.Body = p.Subject, p.Body
	if err := a.Final.Validate(); err != nil {
		r := "the corrected email cannot be sent: " + err.Error()
		return nil, r, &refusal{name: name, sha: a.SHA256, reason: r}, nil
	}
	return a, "", nil, nil
}

// checkCommon applies content mode's rules that do not depend on the
// content: type, status, expiry and the content hash the file was issued
// with. It returns the expiry and "" when they pass, else a short reason.
func (m *matcher) checkCommon(p *parsedFile, mtime time.Time) (time.Time, string) {
	if r := m.checkTypeStatus(p); r != "" {
		return time.Time{}, r
	}
	exp, r := m.expiry(p, mtime)
	if r != "" {
		return time.Time{}, r
	}
	switch h := strings.TrimSpace(p.ContentSHA256); {
	case h == "" && m.v.o.Ledger != nil:
		return time.Time{}, "content_sha256 missing"
	case h == "":
		// A file without a hash must say exactly what was asked.
		if r := contentReason(p, m.req); r != "" {
			return time.Time{}, r
		}
	case !strings.EqualFold(h, m.sha):
		return time.Time{}, "content_sha256 differs"
	}
	return exp, ""
}

func (m *matcher) checkTypeStatus(p *parsedFile) string {
	if Kind(strings.ToLower(strings.TrimSpace(p.Type))) != m.req.Kind {
		return "type differs"
	}
	switch s := strings.ToLower(strings.TrimSpace(p.Status)); s {
	case "pending", "approved":
		// The move into Approved/ is the approval; editing status is optional.
	case "":
		return "status missing"
	default:
		return "status " + truncateForError([]byte(s))
	}
	return ""
}

// checkRecipientMode applies recipient mode's rules: type, status, the
// binding (the thread of a reply, every recipient of a send) and the expiry.
func (m *matcher) checkRecipientMode(p *parsedFile, mtime time.Time) (time.Time, string) {
	if r := m.checkTypeStatus(p); r != "" {
		return time.Time{}, r
	}
	if r := bindingReason(p, m.req, m.addr); r != "" {
		return time.Time{}, r
	}
	// Every recipient, not only `to`: a hand-written approval for one
	// recipient does not let a cc or bcc ride along. (A reply to its
	// sender alone stays bound by its thread, as the contract has it.)
	extra := len(m.req.ToList)+len(m.req.Cc)+len(m.req.Bcc) > 0
	if (m.req.Kind != KindReply || extra) && recipientsChange(p, m.req) != "" {
		return time.Time{}, "recipients differ"
	}
	return m.expiry(p, mtime)
}

// bindingChange says, for the human, how a request file's recipients,
// thread, answered or forwarded message, HTML part or attachments differ
// from the call's ("" when they agree).
func bindingChange(p *parsedFile, req Request) string {
	if r := accountChange(p, req); r != "" {
		return r
	}
	if req.Kind.IsAction() {
		return actionBinding(p, req) // kind_action.go
	}
	if r := fromChange(p, req); r != "" {
		return r
	}
	if r := sendAtChange(p, req); r != "" {
		return r
	}
	if req.Kind == KindReply {
		if t := strings.TrimSpace(p.ThreadID); t != req.ThreadID {
			return fmt.Sprintf("the thread was changed from %s to %s: an approval cannot move a reply to another thread", req.ThreadID, shown(t))
		}
	}
	if req.Kind == KindReply || req.Kind == KindForward {
		if mid := strings.TrimSpace(p.MessageID); mid != req.MessageID {
			return fmt.Sprintf("the message answered or forwarded was changed from %s to %s: an approval cannot change it", req.MessageID, shown(mid))
		}
	}
	if req.Kind == KindReply && req.To == "" && p.To.one() == "" {
		return ""
	}
	if req.Kind != KindForward {
		a, err := parseSingleAddress(p.To.first())
		if err != nil || !strings.EqualFold(a, req.Address()) {
			return fmt.Sprintf("the recipient was changed from %s to %s: an approval cannot change who an email goes to", req.Address(), shown(p.To.one()))
		}
	}
	if r := recipientsChange(p, req); r != "" {
		return r
	}
	return partsChange(p, req)
}

// recipientsChange compares every recipient list of the file with the
// call's (bare addresses, case folded, in order).
func recipientsChange(p *parsedFile, req Request) string {
	for i, l := range req.recipients() {
		got := []addrList{p.To, p.Cc, p.Bcc}[i]
		want := bound(l.addrs)
		have := bound(got)
		if len(have) != len(got) || strings.Join(have, ",") != strings.Join(want, ",") {
			return fmt.Sprintf("the %s recipients were changed from [%s] to [%s]: an approval cannot change who an email goes to",
				l.header, strings.Join(want, ", "), shown(got.one()))
		}
	}
	return ""
}

// partsChange compares what is sent besides the text: the HTML part's
// digest and the attachments as listed.
func partsChange(p *parsedFile, req Request) string {
	if !strings.EqualFold(strings.TrimSpace(p.HTMLSHA256), req.HTMLSHA256) {
		return "the HTML part's digest was changed: an approval cannot change what is sent besides the text"
	}
	want := make([]string, len(req.Attachments))
	for i, a := range req.Attachments {
		want[i] = a.line()
	}
	if strings.Join(p.Attachments, "\n") != strings.Join(want, "\n") {
		return "the attachments were changed: an approval cannot change which files are sent"
	}
	return ""
}

// bindingReason checks what both modes bind: the recipient of a send, the
// thread of a reply.
func bindingReason(p *parsedFile, req Request, addr string) string {
	if accountChange(p, req) != "" {
		return "account differs"
	}
	if req.Kind.IsAction() {
		return actionBinding(p, req) // kind_action.go
	}
	if fromChange(p, req) != "" {
		return "from differs"
	}
	if sendAtChange(p, req) != "" {
		return "send_at differs"
	}
	switch req.Kind {
	case KindReply:
		if strings.TrimSpace(p.ThreadID) != req.ThreadID {
			return "thread differs"
		}
		return ""
	case KindForward:
		if strings.TrimSpace(p.MessageID) != req.MessageID {
			return "message_id differs"
		}
		return ""
	}
	a, err := parseSingleAddress(p.To.one())
	if err != nil {
		return "recipient is not exactly one address"
	}
	if strings.ToLower(a) != addr {
		return "recipient differs"
	}
	return ""
}

// contentReason checks content mode's binding: the recipient of a send or
// the thread of a reply, for a reply also the message answered and the
// resolved recipient, and for both the exact subject and body (line endings
// normalised).
func contentReason(p *parsedFile, req Request) string {
	addr := strings.ToLower(req.Address())
	if accountChange(p, req) != "" {
		return "account differs"
	}
	if fromChange(p, req) != "" {
		return "from differs"
	}
	if sendAtChange(p, req) != "" {
		return "send_at differs"
	}
	if req.Kind == KindSend {
		// The first To here, every recipient below (recipientsChange).
		if a, err := parseSingleAddress(p.To.first()); err != nil || strings.ToLower(a) != addr {
			return "recipient differs"
		}
	} else if r := bindingReason(p, req, addr); r != "" {
		return r
	}
	if req.Kind == KindReply {
		if strings.TrimSpace(p.MessageID) != req.MessageID {
			return "message_id differs"
		}
		if req.To != "" || p.To.one() != "" {
			if a, err := parseSingleAddress(p.To.first()); err != nil || strings.ToLower(a) != addr {
				return "recipient differs"
			}
		}
	}
	if recipientsChange(p, req) != "" {
		return "recipients differ"
	}
	if partsChange(p, req) != "" {
		return "attachments or HTML part differ"
	}
	if p.Subject != req.Subject {
		return "subject differs"
	}
	if p.Body != normalizeNewlines(req.Body) {
		return "body differs"
	}
	return ""
}

// expiry enforces `expires`. Content mode requires it. Recipient mode
// honours a file without one only while its modification time is within
// TTL, because the contract's hand-written files carry no expiry; a file
// that states one is held to it in both modes.
func (m *matcher) expiry(p *parsedFile, mtime time.Time) (time.Time, string) {
	if strings.TrimSpace(p.Expires) == "" {
		if m.v.o.Mode == ModeContent {
			return time.Time{}, "expires missing"
		}
		if m.now.Sub(mtime) > m.v.o.TTL {
			return time.Time{}, "expired (no expires, file older than the TTL)"
		}
		return time.Time{}, ""
	}
	exp, err := parseTime(p.Expires)
	if err != nil {
		return time.Time{}, "expires unparsable"
	}
	if !m.now.Before(exp) {
		return time.Time{}, "expired"
	}
	return exp, ""
}

// shown renders a value a human wrote for a reason line: control
// characters quoted, cut at 200 bytes.
func shown(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return printable(s)
}

// check applies every rule that needs no ledger, as the fuzz tests see
// them: without a ledger a file must carry exactly the request.
func (m *matcher) check(p *parsedFile, mtime time.Time) (time.Time, string) {
	if m.v.o.Mode == ModeRecipient {
		return m.checkRecipientMode(p, mtime)
	}
	exp, r := m.checkCommon(p, mtime)
	if r != "" {
		return time.Time{}, r
	}
	if r := contentReason(p, m.req); r != "" {
		return time.Time{}, r
	}
	return exp, ""
}

// fromChange compares the file's send-as address with the call's (bare
// address, case folded; both "" for the account's default).
func fromChange(p *parsedFile, req Request) string {
	have, want := strings.TrimSpace(p.From), strings.TrimSpace(req.From)
	hb, wb := strings.Join(bound([]string{have}), ""), strings.Join(bound([]string{want}), "")
	if hb == wb && (have == "") == (want == "") && (have == "" || hb != "") {
		return ""
	}
	if want == "" {
		want = "the account's default address"
	}
	return fmt.Sprintf("the sender was changed from %s to %s: an approval cannot change who an email comes from", shown(want), shown(have))
}

// sendAtChange compares the file's send time with the call's (both unset:
// send when approved).
func sendAtChange(p *parsedFile, req Request) string {
	have := strings.TrimSpace(p.SendAt)
	want := ""
	if !req.SendAt.IsZero() {
		want = FormatSendAt(req.SendAt)
	}
	if have == want {
		return ""
	}
	if t, err := parseTime(have); err == nil && want != "" && FormatSendAt(t) == want {
		return ""
	}
	return fmt.Sprintf("the send time was changed from %s to %s: an approval cannot change when an email is sent", orNow(want), orNow(shown(have)))
}

func orNow(s string) string {
	if s == "" || s == `""` {
		return "when approved"
	}
	return s
}

// accountChange compares the file's account with the call's (both ""
// or "default" for the default account).
func accountChange(p *parsedFile, req Request) string {
	have, want := account.Resolve(strings.TrimSpace(p.Account)), account.Resolve(req.Account)
	if have == want {
		return ""
	}
	return fmt.Sprintf("the account was changed from %s to %s: an approval cannot move an email or an action to another Gmail account", want, shown(have))
}
