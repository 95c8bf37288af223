package doctor

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// The live check (mailgate doctor --live) asks the user's real account the
// questions mailgate's tests ask the local Gmail server, so that where Gmail
// answers differently from what mailgate expects, the user sees it before an
// agent does. It exists because the local server is ours: the day it was
// kinder than Gmail (attachment ids that never change), every test passed
// and get_attachment failed on every real message.
//
// It goes through the path serve uses (gmail.New with the home's token
// file: refreshed and saved the same way, the same retries), makes only
// read calls and one write that it undoes (a draft to the user's own
// address, read back and deleted), and never sends.

// liveSubject marks the draft the check writes, so a user who finds one
// left behind (the delete failed) knows where it came from.
const liveSubject = "mailgate doctor --live check (deleted at once)"

// fixLiveReport is the fix for an answer mailgate does not expect: nothing
// the user can change makes it right, so the maintainers need to hear it.
const fixLiveReport = "report this line and `mailgate version` to mailgate's maintainers: mailgate's tools assume otherwise"

// live runs the live checks after the others, if they got as far as a
// working Gmail call.
func (r *run) live() {
	if i := slices.IndexFunc(r.checks, func(c Check) bool { return c.Name == "gmail api" }); i < 0 || r.checks[i].Status != OK {
		r.add(Check{Name: "live", Status: Warn, Detail: "not run: it needs the token and gmail api checks above to pass",
			Fix: "fix the FAIL lines above, then run mailgate doctor --live again"})
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, 3*time.Minute)
	defer cancel()
	// serve's path (openEmail): the token from the home, refreshed and
	// saved by the client, serve's HTTP client and retries.
	c, err := gmail.New(ctx, gmail.Options{CredentialsFile: r.cfg.CredentialsFile, TokenFile: r.cfg.TokenFile,
		Endpoint: r.cfg.GmailEndpoint})
	if err != nil {
		r.add(Check{Name: "live", Status: Fail, Detail: err.Error(), Fix: fixAuth})
		return
	}
	l := &liveRun{run: r, c: c}
	me := l.profile(ctx)
	l.labels(ctx)
	found := l.search(ctx)
	l.thread(ctx, found)
	l.attachment(ctx)
	l.draft(ctx, me)
	l.scopes()
}

type liveRun struct {
	*run
	c       *gmail.Client
	allowed []string // calls Gmail allowed
	refused []string // calls Gmail refused for a missing scope: "call (scope)"
}

// result records a call's outcome for the scopes line and turns a failure
// into the check's FAIL, with the fix its kind of error calls for. It
// reports whether the call worked.
func (l *liveRun) result(c *Check, call string, err error) bool {
	if err == nil {
		l.allowed = append(l.allowed, call)
		return true
	}
	c.Status, c.Detail = Fail, call+": "+err.Error()
	var pe *gmail.PermissionError
	var re *gmail.ReauthError
	var rl *gmail.RateLimitedError
	switch {
	case errors.As(err, &pe):
		l.refused = append(l.refused, fmt.Sprintf("%s (%s)", call, short([]string{pe.Scope})))
		c.Detail = fmt.Sprintf("%s: Gmail refused it: the token lacks %s", call, short([]string{pe.Scope}))
		c.Fix = fixAuth + " and tick every checkbox on Google's consent screen"
	case errors.As(err, &re):
		c.Fix = fixAuth
	case errors.As(err, &rl):
		c.Fix = "Gmail asks to wait until " + rl.Until.Local().Format("15:04") + ": run mailgate doctor --live again then"
	default:
		c.Fix = "run mailgate doctor --live again; if it fails the same way, " + fixLiveReport
	}
	return false
}

func (l *liveRun) profile(ctx context.Context) string {
	c := Check{Name: "live profile"}
	p, err := l.c.GetProfile(ctx)
	if !l.result(&c, "users.getProfile", err) {
		l.add(c)
		return ""
	}
	c.Detail = fmt.Sprintf("%s: %d messages, %d threads, historyId %d", p.EmailAddress, p.MessagesTotal, p.ThreadsTotal, p.HistoryID)
	aliases, err := l.c.SendAsAliases(ctx)
	if !l.result(&c, "settings.sendAs.list", err) {
		l.add(c)
		return p.EmailAddress
	}
	var also []string
	for _, a := range aliases {
		switch {
		case strings.EqualFold(a.Email, p.EmailAddress):
		case a.Verified:
			also = append(also, a.Email)
		default:
			also = append(also, a.Email+" (unverified: Gmail refuses it as From)")
		}
	}
	if len(also) > 0 {
		c.Detail += "; also sends as " + strings.Join(also, ", ")
	}
	if !slices.ContainsFunc(aliases, func(a gmail.SendAs) bool { return a.Primary && strings.EqualFold(a.Email, p.EmailAddress) }) {
		// reply_email leaves the user's own addresses out of a reply to
		// all, and reads them from here.
		c.Status, c.Detail = Warn, c.Detail+"; the send-as list does not name "+p.EmailAddress+" as primary"
		c.Fix = fixLiveReport
	}
	l.add(c)
	return p.EmailAddress
}

// systemLabels are the system labels mailgate's tools name (search,
// trash_email, modify_labels, drafts).
var liveSystemLabels = []string{"INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "UNREAD", "STARRED", "IMPORTANT"}

func (l *liveRun) labels(ctx context.Context) {
	c := Check{Name: "live labels"}
	labels, err := l.c.ListLabels(ctx)
	if !l.result(&c, "labels.list", err) {
		l.add(c)
		return
	}
	have := map[string]bool{}
	user := 0
	for _, lb := range labels {
		have[lb.ID] = true
		if lb.Type == "user" {
			user++
		}
	}
	var missing []string
	for _, id := range liveSystemLabels {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	c.Detail = fmt.Sprintf("%d labels: %d system, %d yours", len(labels), len(labels)-user, user)
	if len(missing) > 0 {
		c.Status = Warn
		c.Detail += "; missing system labels mailgate's tools use: " + strings.Join(missing, ", ")
		c.Fix = "check that GMAIL_API_ENDPOINT is unset (Google's Gmail) or points at a Gmail-compatible server; otherwise " + fixLiveReport
	}
	l.add(c)
}

// search runs the search an agent runs first, and a second page when Gmail
// offers one; it returns the first page's results.
func (l *liveRun) search(ctx context.Context) []gmail.Summary {
	const q, limit = "in:inbox", 5
	c := Check{Name: "live search"}
	p, err := l.c.SearchPage(ctx, q, limit, "")
	if !l.result(&c, "messages.list", err) {
		l.add(c)
		return nil
	}
	c.Detail = fmt.Sprintf("%q: %d shown, about %d in all", q, len(p.Results), p.ResultSizeEstimate)
	for _, s := range p.Results {
		if s.ID == "" || s.ThreadID == "" {
			c.Status, c.Detail, c.Fix = Fail, c.Detail+"; a result came without its message or thread id", fixLiveReport
			l.add(c)
			return nil
		}
	}
	if p.NextPageToken != "" {
		next, err := l.c.SearchPage(ctx, q, limit, p.NextPageToken)
		if !l.result(&c, "messages.list (page 2)", err) {
			l.add(c)
			return p.Results
		}
		c.Detail += fmt.Sprintf("; page 2 gave %d more", len(next.Results))
		if slices.ContainsFunc(next.Results, func(s gmail.Summary) bool {
			return slices.ContainsFunc(p.Results, func(f gmail.Summary) bool { return f.ID == s.ID })
		}) {
			c.Status, c.Detail, c.Fix = Warn, c.Detail+", repeating some of page 1", fixLiveReport
		}
	}
	if len(p.Results) == 0 {
		c.Detail += " (an empty inbox: the thread check has nothing to read)"
	}
	l.add(c)
	return p.Results
}

func (l *liveRun) thread(ctx context.Context, found []gmail.Summary) {
	c := Check{Name: "live thread"}
	if len(found) == 0 {
		c.Detail = "not checked: the search found no message"
		l.add(c)
		return
	}
	s := found[0]
	msgs, err := l.c.Thread(ctx, s.ThreadID)
	if !l.result(&c, "threads.get", err) {
		l.add(c)
		return
	}
	c.Detail = fmt.Sprintf("thread %s of the first result: %d message(s)", s.ThreadID, len(msgs))
	if !slices.ContainsFunc(msgs, func(m *gmail.Message) bool { return m.ID == s.ID }) {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("thread %s does not hold message %s, which the search placed in it", s.ThreadID, s.ID), fixLiveReport
	}
	l.add(c)
}

// attachment reads a message with an attachment twice and fetches the
// attachment with the id from each read. Gmail gives a part a new
// attachmentId on every read; mailgate expects the id of the read it just
// made to work (get_attachment and forward_email read the message, then
// fetch by that read's ids) and, for a Gmail attachmentId an agent got
// elsewhere, every id Gmail gave to stay usable.
func (l *liveRun) attachment(ctx context.Context) {
	c := Check{Name: "live attachment"}
	const q = "has:attachment"
	found, err := l.c.Search(ctx, q, 10)
	if !l.result(&c, "messages.list", err) {
		l.add(c)
		return
	}
	var first *gmail.Message
	var file gmail.Attachment
	inline := 0
	for _, s := range found {
		m, err := l.c.Message(ctx, s.ID)
		if !l.result(&c, "messages.get", err) {
			l.add(c)
			return
		}
		for _, f := range m.Files {
			if f.ID == "" {
				inline++
				continue
			}
			if first == nil {
				first, file = m, f
			}
		}
		if first != nil {
			break
		}
	}
	if first == nil {
		c.Detail = fmt.Sprintf("not checked: no message found by %q has an attachment Gmail stores apart (the account may have none)", q)
		if inline > 0 {
			c.Detail += fmt.Sprintf("; %d small part(s) came inline, as Gmail sends them", inline)
		}
		l.add(c)
		return
	}
	again, err := l.c.Message(ctx, first.ID)
	if !l.result(&c, "messages.get", err) {
		l.add(c)
		return
	}
	i := slices.IndexFunc(again.Files, func(f gmail.Attachment) bool { return f.PartID == file.PartID })
	if i < 0 {
		c.Status, c.Fix = Fail, fixLiveReport
		c.Detail = fmt.Sprintf("message %s: part %s (%q) is missing from a second read", first.ID, file.PartID, file.Filename)
		l.add(c)
		return
	}
	second := again.Files[i]
	what := fmt.Sprintf("message %s, part %s (%s, %d bytes)", first.ID, file.PartID, cmp.Or(file.MimeType, "no type"), file.Size)
	b2, err2 := l.c.GetAttachment(ctx, first.ID, second.ID)
	b1, err1 := l.c.GetAttachment(ctx, first.ID, file.ID)
	switch {
	case err2 != nil:
		l.result(&c, "attachments.get", err2)
		c.Detail = what + ": the id of the read just made failed (" + err2.Error() +
			"): get_attachment and forward_email fetch by the ids of the read they make, so they fail too"
	case err1 != nil:
		if !l.result(&c, "attachments.get", err1) && c.Fix != fixAuth+" and tick every checkbox on Google's consent screen" {
			c.Status = Warn
			c.Fix = "give get_attachment the attachment_id read_email lists (part:N), not a Gmail attachmentId; and " + fixLiveReport
		}
		c.Detail = what + ": the id from the first read stopped working once the message was read again (" + err1.Error() +
			"): read_email's part:N ids still work (get_attachment reads afresh), but a Gmail attachmentId an agent got elsewhere fails"
	case !bytes.Equal(b1, b2):
		c.Status, c.Fix = Fail, fixLiveReport
		c.Detail = fmt.Sprintf("%s: the two ids gave different bytes (%d and %d)", what, len(b1), len(b2))
	case file.Size > 0 && int64(len(b1)) != file.Size:
		c.Status, c.Fix = Warn, fixLiveReport
		c.Detail = fmt.Sprintf("%s: fetched %d bytes, not the %d the message announced", what, len(b1), file.Size)
	case file.ID != second.ID:
		l.allowed = append(l.allowed, "attachments.get")
		c.Detail = what + ": a new attachment id on each read (Gmail's ephemeral ids), both usable and giving the same bytes, as mailgate expects"
	default:
		l.allowed = append(l.allowed, "attachments.get")
		c.Detail = what + ": the same attachment id on both reads, and it fetched the bytes"
	}
	l.add(c)
}

// draft writes the one thing the check writes: a draft to the user's own
// address, read back and deleted. Nothing is sent: drafts.send and
// messages.send are never called.
func (l *liveRun) draft(ctx context.Context, me string) {
	c := Check{Name: "live draft"}
	if me == "" {
		c.Status, c.Detail, c.Fix = Warn, "not checked: the profile gave no address to draft to", "fix the live profile line first"
		l.add(c)
		return
	}
	raw, err := mailmsg.Build(mailmsg.Outgoing{To: &mail.Address{Address: me}, Subject: liveSubject,
		Body: "mailgate doctor --live wrote this draft to check that drafting works, and deletes it at once. It was never sent.\n"})
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, "building the draft: "+err.Error(), fixLiveReport
		l.add(c)
		return
	}
	id, err := l.c.CreateDraft(ctx, raw, "")
	if !l.result(&c, "drafts.create", err) {
		l.add(c)
		return
	}
	leftover := fmt.Sprintf("delete the draft %q in Gmail's Drafts by hand", liveSubject)
	d, err := l.c.GetDraft(ctx, id)
	if l.result(&c, "drafts.get", err) {
		m := d.Message
		switch {
		case m == nil || m.Subject != liveSubject || !strings.Contains(strings.ToLower(m.To), strings.ToLower(me)):
			c.Status, c.Fix = Fail, fixLiveReport
			c.Detail = fmt.Sprintf("draft %s read back with other content than written", id)
		case !slices.Contains(m.Labels, "DRAFT"):
			c.Status, c.Fix = Warn, fixLiveReport
			c.Detail = fmt.Sprintf("draft %s read back without the DRAFT label (labels %s)", id, strings.Join(m.Labels, ","))
		}
	}
	failed := c.Status != OK
	if err := l.c.DeleteDraft(ctx, id); err != nil {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("draft %s: deleting it failed: %v", id, err), leftover
		l.refusedIfScope("drafts.delete", err)
		l.add(c)
		return
	}
	l.allowed = append(l.allowed, "drafts.delete")
	if _, err := l.c.GetDraft(ctx, id); !errors.Is(err, gmail.ErrDraftNotFound) {
		c.Status, c.Detail, c.Fix = Fail, fmt.Sprintf("draft %s is still there after drafts.delete (%v)", id, err), leftover
	} else if !failed {
		c.Detail = fmt.Sprintf("wrote draft %s to %s, read it back, deleted it; nothing was sent", id, me)
	}
	l.add(c)
}

func (l *liveRun) refusedIfScope(call string, err error) {
	var pe *gmail.PermissionError
	if errors.As(err, &pe) {
		l.refused = append(l.refused, fmt.Sprintf("%s (%s)", call, short([]string{pe.Scope})))
	}
}

// scopes says what the calls above proved the token may do: the scopes
// line reads what Google said it granted, this one what Gmail allowed.
func (l *liveRun) scopes() {
	c := Check{Name: "live scopes"}
	if len(l.refused) > 0 {
		c.Status, c.Fix = Fail, fixAuth+" and tick every checkbox on Google's consent screen"
		c.Detail = "Gmail refused for a missing scope: " + strings.Join(l.refused, ", ")
		l.add(c)
		return
	}
	c.Detail = fmt.Sprintf("Gmail allowed every call made (%d kinds: reading and drafting); "+
		"organising (gmail.modify) is not tried, the scopes line says whether it is granted", len(slices.Compact(slices.Sorted(slices.Values(l.allowed)))))
	l.add(c)
}
