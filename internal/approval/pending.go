package approval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// Instructions is written into every request file for the human. It is
// worded for where it is true, because a file manager moves files without
// rewriting them; mailgate rewrites it whenever it moves or consumes a file
// itself (see statusNote).
const Instructions = "While this file is in Pending_Approval/: move it to Approved/ to allow this exact email to be sent once (you may correct the subject or the body first, not the recipient), or to Rejected/ to refuse it."

// FormatV2 marks request files whose body area starts with mailgate's notes
// (warnings, status) and holds the email body after BodyMarker.
const FormatV2 = "mailgate-request-v2"

// BodyMarker is the line of a FormatV2 file after which (and one blank
// line) the email body starts. Everything above it is mailgate's notes for
// the human and is never sent.
const BodyMarker = "## Email body (everything below this line is sent)"

// Bounds on outstanding requests (issue: an agent wrote 100 × 500 KiB
// requests in a second). A request that would exceed them is not written;
// the agent is told to wait for the human. Files already pending for the
// same email are still returned.
const (
	DefaultMaxPending             = 200
	DefaultMaxPendingPerRecipient = 20
)

// BacklogError is returned when too many requests are already waiting.
type BacklogError struct {
	Limit     int
	Recipient string // "" when the overall bound was hit
}

func (e *BacklogError) Error() string {
	if e.Recipient != "" {
		return fmt.Sprintf("%d requests to %s are already waiting for approval in %s/ (the most mailgate keeps per recipient)", e.Limit, e.Recipient, DirPending)
	}
	return fmt.Sprintf("%d requests are already waiting for approval in %s/ (the most mailgate keeps)", e.Limit, DirPending)
}

// Pending is a request file in Pending_Approval/.
type Pending struct {
	Name, Path string
	RequestID  string
	// Warnings are the file's warnings, for the agent's answer.
	Warnings []string
	// Earlier is the last consumed copy of this exact email in Done/, if
	// any: Status is its recorded outcome (sent, failed, unknown, or the
	// status it was claimed with), SentAt set when it was sent.
	Earlier *Handled
}

// Handled describes a consumed copy of a request in Done/.
type Handled struct {
	Name   string
	Status string
	SentAt time.Time
	Count  int // consumed copies of this email in Done/
	// MessageID is the Message-ID the copy went out with, or was to
	// (outgoing_message_id); "" when the file has none.
	MessageID string

	modTime time.Time
}

// Repeat reports whether the earlier copy may have left the mailbox, so
// approving again may send a second one.
func (h *Handled) Repeat() bool {
	return h != nil && h.Status != StatusFailed
}

// EnsurePending writes (or finds) the request file for req and returns its
// name in Pending_Approval/; see Request.
func (v *Vault) EnsurePending(ctx context.Context, req Request) (string, error) {
	p, err := v.Request(ctx, req, nil)
	if err != nil {
		return "", err
	}
	return p.Name, nil
}

// Request writes the request file Pending_Approval/<name>.md for req (see
// requestName) with the warnings the content itself raises (warnings.Address,
// warnings.Body) and extra ones the caller knows (Reply-To, a new recipient).
// It is idempotent: while a current request file for the same content sits
// in Pending_Approval/ (same content_sha256, status pending or approved, not
// expired, and — with a ledger — still issued) it is returned untouched, so
// a human's corrections in progress are never overwritten. A stale file of
// the same content (expired, unissued) is replaced in place. A file of
// different content is NEVER replaced: the hash in the name makes a clash
// impossible by chance, and a planted file under the name only makes the new
// request take another name. Once the earlier file has been consumed (Done/)
// a fresh request with a new request_id is written; if the earlier one may
// have been sent, the new one is marked as a repeat at its top and in its
// name. (A request in Rejected/ never gets here: Find answers ErrRejected.)
func (v *Vault) Request(ctx context.Context, req Request, extra []warnings.Warning) (*Pending, error) {
	return v.RequestChecked(ctx, req, extra, nil)
}

// RequestChecked is Request, calling check (when not nil) with the request
// as the new file will describe it — its OutgoingMessageID set, for an
// email — before anything is written: an error from check writes nothing
// and is returned as it is. The gate builds the email there, once, so the
// bytes checked are the ones the file describes, Message-ID included. A
// current request found for the same content is returned without a check
// (it was checked when it was written).
func (v *Vault) RequestChecked(ctx context.Context, req Request, extra []warnings.Warning, check func(Request) error) (*Pending, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	sha := req.SHA256()
	id := nameID(sha)
	now := v.o.Now()
	ws := requestWarnings(req, extra)
	names, err := v.namesWithID(DirPending, id)
	if err != nil {
		return nil, fmt.Errorf("writing request: %w", err)
	}
	stale := ""
	for _, n := range names {
		st, rid, err := v.pendingState(ctx, v.path(DirPending, n), req.Kind, sha, now)
		if err != nil {
			return nil, err
		}
		switch st {
		case pendingCurrent:
			return &Pending{Name: n, Path: v.path(DirPending, n), RequestID: rid, Warnings: warnings.Texts(ws), Earlier: v.earlier(id)}, nil
		case pendingStale:
			if stale == "" {
				stale = n
			}
		}
	}
	if stale == "" {
		if err := v.checkBacklog(req); err != nil {
			return nil, err
		}
	}
	earlier := v.earlier(id)
	repeat := 0
	if earlier.Repeat() {
		repeat = earlier.Count + 1
		ws = append([]warnings.Warning{{Code: warnings.CodeRepeat, Text: repeatText(earlier)}}, ws...)
	}
	rid := id + "-" + randomHex(4)
	msgID := ""
	if !req.Kind.IsAction() {
		if msgID = inheritedMessageID(earlier, id); msgID == "" {
			msgID = MessageIDFor(rid)
		}
	}
	if check != nil {
		written := req
		written.OutgoingMessageID = msgID
		if err := check(written); err != nil {
			return nil, err
		}
	}
	if v.o.Ledger != nil {
		// Issue before the file exists, so no request file ever names an
		// id the ledger does not know.
		if err := v.o.Ledger.Issue(ctx, rid, sha, now); err != nil {
			return nil, fmt.Errorf("writing request: %w", err)
		}
	}
	if req.HTMLFrom == mailmsg.FormatHTML {
		// For the approval page (htmlpart.go); a failure only means the
		// page cannot show this HTML part.
		_ = v.keepHTML(req.HTML, req.HTMLSHA256)
	}
	data := renderRequestFile(requestFile{req: req, sha: sha, id: rid, msgID: msgID, created: now, expires: now.Add(v.o.TTL),
		warnings: warnings.Texts(ws), note: v.history(id, earlier), original: v.keepOriginal(req.Kind, req.Original)})
	p := &Pending{RequestID: rid, Warnings: warnings.Texts(ws), Earlier: earlier}
	if stale != "" {
		// Same content, no longer usable: replace it where the human saw it,
		// after checking once more that it is still this email.
		path := v.path(DirPending, stale)
		if st, _, err := v.pendingState(ctx, path, req.Kind, sha, now); err == nil && st == pendingStale {
			if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
				return nil, fmt.Errorf("writing request %s: %w", stale, err)
			}
			p.Name, p.Path = stale, path
			return p, nil
		}
	}
	base := strings.TrimSuffix(requestName(req, sha, now, repeat), ".md")
	for attempt := 1; ; attempt++ {
		name := base + ".md"
		if attempt > 1 {
			name = fmt.Sprintf("%s-%d.md", base, attempt)
		}
		path := v.path(DirPending, name)
		err := atomicfile.WriteNew(path, data, 0o600)
		if err == nil {
			p.Name, p.Path = name, path
			return p, nil
		}
		if !isExist(err) || attempt == 20 {
			return nil, fmt.Errorf("writing request %s: %w", name, err)
		}
		// Something is there already. Another process may have written this
		// very request a moment ago: use it. Anything else stays untouched.
		if st, rid, err := v.pendingState(ctx, path, req.Kind, sha, now); err == nil && st == pendingCurrent {
			return &Pending{Name: name, Path: path, RequestID: rid, Warnings: warnings.Texts(ws), Earlier: earlier}, nil
		}
	}
}

// requestWarnings are the warnings a request file carries: the repeat
// first (added by Request), then the caller's, then what the content raises.
func requestWarnings(req Request, extra []warnings.Warning) []warnings.Warning {
	ws := append([]warnings.Warning(nil), extra...)
	for _, l := range req.recipients() {
		for _, a := range l.addrs {
			ws = append(ws, warnings.Address(l.header, a)...)
		}
	}
	ws = append(ws, warnings.Text("The subject", req.Subject)...)
	for _, l := range req.HTMLLinks {
		if l.Misleading {
			ws = append(ws, warnings.Warning{Code: "misleading_link",
				Text: "A link in the HTML part shows " + strconv.Quote(l.Text) + " but goes to " + strconv.Quote(l.Target) + "."})
		}
	}
	return append(ws, warnings.Body(req.Body)...)
}

func repeatText(h *Handled) string {
	when := "was already handled"
	switch {
	case h.Status == StatusScheduled:
		return "REPEAT: this exact email is already approved and scheduled (" + DirDone + "/" + h.Name + "): it is sent at its time. Approving this file sends a second copy."
	case h.Status == StatusSent && !h.SentAt.IsZero():
		when = "was already sent at " + h.SentAt.UTC().Format(time.RFC3339)
	case h.Status == StatusSent:
		when = "was already sent"
	case h.Status == StatusUnknown:
		when = "may already have been sent (the outcome of an earlier attempt is unknown: check Sent)"
	default:
		when = "may already have been sent (an earlier approval was consumed and its outcome never recorded: check Sent)"
	}
	if h.Status != StatusSent && h.MessageID != "" {
		// The new request keeps the earlier Message-ID (inheritedMessageID).
		return "REPEAT: this exact email " + when + " (" + DirDone + "/" + h.Name + "). This request keeps that email's Message-ID: if the earlier one did leave, approving this file records it as sent and sends nothing; if it did not, this file sends it once."
	}
	return "REPEAT: this exact email " + when + " (" + DirDone + "/" + h.Name + "). Approving this file sends it again, as a second copy."
}

type pendingStatus int

const (
	pendingNone    pendingStatus = iota // nothing, or not this email: never replace
	pendingCurrent                      // a usable request for this email
	pendingStale                        // this email, no longer usable: may be replaced
)

// pendingState reads path and says what it is to a request for sha.
func (v *Vault) pendingState(ctx context.Context, path string, k Kind, sha string, now time.Time) (pendingStatus, string, error) {
	data, _, err := readRegular(path, v.o.MaxFileSize)
	if err != nil {
		return pendingNone, "", nil // gone, a symlink or oversized: not ours to touch
	}
	p, err := parseApproval(data)
	if err != nil || Kind(p.Type) != k || !strings.EqualFold(strings.TrimSpace(p.ContentSHA256), sha) {
		// Unreadable (a human's broken edit), or another email: never
		// replaced, whatever its name.
		return pendingNone, "", nil
	}
	if s := strings.TrimSpace(p.Status); s != "pending" && s != "approved" {
		return pendingStale, "", nil
	}
	if exp, err := parseTime(p.Expires); err != nil || !now.Before(exp) {
		return pendingStale, "", nil
	}
	rid := strings.TrimSpace(p.RequestID)
	if v.o.Ledger != nil {
		ok, err := v.o.Ledger.Issued(ctx, rid, sha)
		if err != nil {
			return pendingNone, "", fmt.Errorf("checking request ledger: %w", err)
		}
		if !ok {
			return pendingStale, "", nil
		}
	}
	return pendingCurrent, rid, nil
}

// checkBacklog refuses a new request when too many are waiting, in all or
// for req's recipient (counted by the recipient part of the file names, so
// no file is read; a subject whose slug equals a recipient's only makes the
// bound stricter). Expired requests count until the human clears them.
func (v *Vault) checkBacklog(req Request) error {
	names, err := readDirNames(filepath.Join(v.root, DirPending))
	if err != nil {
		return fmt.Errorf("writing request: %w", err)
	}
	total, mine := 0, 0
	tag := "_" + recipientSlug(req) + "_"
	for _, n := range names {
		if !candidateName(n) {
			continue
		}
		total++
		if strings.Contains(n, tag) {
			mine++
		}
	}
	if total >= v.o.MaxPending {
		return &BacklogError{Limit: v.o.MaxPending}
	}
	if mine >= v.o.MaxPendingPerRecipient {
		r := req.Address()
		if req.Kind.IsAction() {
			r = actionSlug(req) // kind_action.go
		}
		if r == "" {
			r = "thread " + req.ThreadID
		}
		return &BacklogError{Limit: v.o.MaxPendingPerRecipient, Recipient: r}
	}
	return nil
}

// earlier finds the consumed copies of the request id in Done/ and
// describes the last one (nil when there is none). It reads Done/, so it
// runs only when a request is answered without an approval, never on the
// send path.
func (v *Vault) earlier(id string) *Handled {
	names, err := v.namesWithID(DirDone, id)
	if err != nil || len(names) == 0 {
		return nil
	}
	var last *Handled
	for _, n := range names {
		it, err := v.item(DirDone, n)
		if err != nil || it.Invalid != "" {
			continue
		}
		h := &Handled{Name: n, Status: strings.TrimSpace(it.Status), SentAt: it.SentAt, MessageID: it.OutgoingMessageID}
		h.modTime = it.ModTime
		if last == nil || h.modTime.After(last.modTime) {
			last = h
		}
	}
	if last == nil {
		return nil
	}
	last.Count = len(names)
	return last
}

// history describes earlier files of the same request outside
// Pending_Approval/, for the human.
func (v *Vault) history(id string, earlier *Handled) string {
	var notes []string
	if names, err := v.namesWithID(DirApproved, id); err == nil && len(names) > 0 {
		notes = append(notes, "Approved/"+names[0]+" holds an earlier approval of this email that can no longer be used (expired, altered or already used); approve this file instead.")
	}
	if earlier != nil && !earlier.Repeat() {
		notes = append(notes, "An earlier approval of this email was used and the send failed (Done/"+earlier.Name+"); nothing was sent.")
	}
	return strings.Join(notes, " ")
}

// DevLog writes the would-be email to Logs/dev_mode/<UTC date>/<NAME>.md
// (replacing an earlier log of the same email) and returns its path.
func (v *Vault) DevLog(req Request, note string) (string, error) {
	now := v.o.Now().UTC()
	dir := filepath.Join(v.root, DirLogs, "dev_mode", now.Format(time.DateOnly))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("writing dev-mode log: %w", err)
	}
	sha := req.SHA256()
	path := filepath.Join(dir, strings.ToUpper(string(req.Kind))+"_"+nameID(sha)+".md")
	kvs := []kv{{key: "type", value: string(req.Kind)}, {key: "status", value: "dev_mode"}}
	kvs = append(kvs, requestFields(req)...)
	kvs = append(kvs,
		kv{key: "logged_at", value: now.Format(time.RFC3339)},
		kv{key: "content_sha256", value: sha},
		kv{key: "note", value: note, quoted: true})
	data := renderFile("mailgate DEV_MODE: this email was NOT sent.", kvs, req.Body)
	if err := atomicfile.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing dev-mode log: %w", err)
	}
	return path, nil
}

// kv is one frontmatter line; quoted values are written as YAML
// double-quoted scalars, a list as a block sequence of quoted scalars.
type kv struct {
	key, value string
	quoted     bool
	list       []string
	// ifAbsent: rewriteFile writes it only where the file has no such key
	// (and then keeps the file's value).
	ifAbsent bool
}

func requestFields(req Request) []kv {
	var kvs []kv
	if req.Account != "" {
		// First of all: the account that sends or acts.
		kvs = append(kvs, kv{key: "account", value: req.Account, quoted: true})
	}
	if req.Kind.IsAction() {
		return append(kvs, actionFields(req)...) // kind_action.go
	}
	if req.From != "" {
		// First: who the email comes from (a send-as address).
		kvs = append(kvs, kv{key: "from", value: req.From, quoted: true})
	}
	if !req.SendAt.IsZero() {
		kvs = append(kvs, kv{key: "send_at", value: FormatSendAt(req.SendAt)})
	}
	if req.Kind == KindReply {
		kvs = append(kvs, kv{key: "thread_id", value: req.ThreadID, quoted: true}, kv{key: "message_id", value: req.MessageID, quoted: true})
	}
	if req.Kind == KindForward {
		kvs = append(kvs, kv{key: "message_id", value: req.MessageID, quoted: true})
	}
	for _, l := range req.recipients() {
		switch {
		case len(l.addrs) == 0:
		case l.field == "to" && len(l.addrs) == 1:
			// One recipient is written as every file always had it.
			kvs = append(kvs, kv{key: "to", value: strings.TrimSpace(l.addrs[0]), quoted: true})
		default:
			list := make([]string, len(l.addrs))
			for i, a := range l.addrs {
				list[i] = strings.TrimSpace(a)
			}
			kvs = append(kvs, kv{key: l.field, list: list})
		}
	}
	kvs = append(kvs, kv{key: "subject", value: req.Subject, quoted: true})
	if req.HTMLSHA256 != "" {
		kvs = append(kvs, kv{key: "html_sha256", value: req.HTMLSHA256})
		if req.HTMLFrom != "" {
			kvs = append(kvs, kv{key: "html_from", value: string(req.HTMLFrom)})
		}
		if links := LinkStrings(req.HTMLLinks); len(links) > 0 {
			kvs = append(kvs, kv{key: "html_links", list: links})
		}
	}
	if len(req.Attachments) > 0 {
		list := make([]string, len(req.Attachments))
		for i, a := range req.Attachments {
			list[i] = a.line()
		}
		kvs = append(kvs, kv{key: "attachments", list: list})
	}
	return kvs
}

// contentNotes tells the human, in a request file's notes, who receives
// the email and what goes with the text they read: the HTML part and each
// attachment. Empty for a plain email to one recipient.
func contentNotes(req Request) string {
	var b strings.Builder
	if req.Account != "" {
		b.WriteString("**Account: " + req.Account + "** (the Gmail account this is done from; part of this approval: the same call for another account is another request)\n\n")
	}
	if !req.SendAt.IsZero() {
		b.WriteString("**Scheduled: sent at " + FormatSendAt(req.SendAt) + " (UTC)**, not when approved: the time is part of this approval. Until then `mailgate approvals cancel` withdraws it.\n\n")
	}
	if req.From != "" {
		b.WriteString("**From: " + oneLineMD(warnings.Escape(req.From)) + "** (a send-as address of the account, verified in Gmail; part of this approval)\n\n")
	}
	if req.RecipientCount() > 1 || len(req.Cc)+len(req.Bcc) > 0 {
		b.WriteString("**Recipients** (every one is part of this approval):\n")
		for _, l := range req.recipients() {
			for _, a := range l.addrs {
				note := ""
				if l.field == "bcc" {
					note = " (blind copy: the others do not see this address)"
				}
				b.WriteString("- " + l.header + ": " + oneLineMD(warnings.Escape(strings.TrimSpace(a))) + note + "\n")
			}
		}
		b.WriteString("\n")
	}
	if req.HTMLSHA256 != "" {
		fix := " Correcting the body re-renders a Markdown body; an email written in HTML cannot be corrected here."
		switch req.HTMLFrom {
		case mailmsg.FormatMarkdown:
			fix = " Correcting the body re-renders the HTML from your text."
		case mailmsg.FormatHTML:
			fix = " It cannot be corrected here (the HTML would not follow): reject it and ask for a new one instead."
		}
		b.WriteString("**" + HTMLDescription(string(req.HTMLFrom)) + "** (sha256 " + req.HTMLSHA256 + ")" + fix + "\n\n")
		for _, l := range HTMLLinkLines(LinkStrings(req.HTMLLinks)) {
			b.WriteString(oneLineMD(warnings.Escape(l)) + "\n")
		}
		b.WriteString("\n")
	}
	if len(req.Attachments) > 0 {
		b.WriteString("**Attachments** (each bound by name, size and SHA-256: a file changed after approval is refused):\n")
		for _, a := range req.Attachments {
			b.WriteString("- " + oneLineMD(warnings.Escape(a.line())) + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// requestFile is what a request file says.
type requestFile struct {
	req              Request
	sha, id          string
	msgID            string // the outgoing Message-ID; "" derives it from id
	created, expires time.Time
	warnings         []string
	note             string
	original         string // the kept original's hash (original.go)
}

func renderRequest(req Request, sha, id string, created, expires time.Time, note string) []byte {
	return renderRequestFile(requestFile{req: req, sha: sha, id: id, created: created, expires: expires,
		warnings: warnings.Texts(requestWarnings(req, nil)), note: note})
}

func renderRequestFile(r requestFile) []byte {
	kvs := []kv{
		{key: "type", value: string(r.req.Kind)},
		{key: "status", value: "pending"},
		{key: "request_id", value: r.id},
	}
	if !r.req.Kind.IsAction() {
		id := r.msgID
		if id == "" {
			id = MessageIDFor(r.id)
		}
		kvs = append(kvs, kv{key: "outgoing_message_id", value: id, quoted: true})
	}
	kvs = append(kvs, requestFields(r.req)...)
	kvs = append(kvs,
		kv{key: "created", value: r.created.UTC().Format(time.RFC3339)},
		kv{key: "expires", value: r.expires.UTC().Format(time.RFC3339)},
		kv{key: "content_sha256", value: r.sha},
		kv{key: "instructions", value: instructionsFor(r.req.Kind), quoted: true})
	if r.original != "" {
		kvs = append(kvs, kv{key: "original_sha256", value: r.original})
	}
	if len(r.warnings) > 0 {
		kvs = append(kvs, kv{key: "warnings", list: r.warnings})
	}
	if r.note != "" {
		kvs = append(kvs, kv{key: "note", value: r.note, quoted: true})
	}
	kvs = append(kvs, kv{key: "format", value: FormatV2})
	var b strings.Builder
	b.WriteString(notesBlock(r.warnings, "**What to do:** "+instructionsFor(r.req.Kind)))
	b.WriteString(contentNotes(r.req))
	b.WriteString(originalNote(r.req, r.original))
	b.WriteString(markerFor(r.req.Kind) + "\n\n")
	b.WriteString(r.req.Body)
	return renderFile("mailgate approval request: read the notes and the email below, then decide.", kvs, b.String())
}

// notesBlock is the top of a FormatV2 file's body area: the warnings (a
// repeat in its own block, first) and a status line, in Markdown callouts
// that Obsidian and other viewers show prominently. It ends with a blank
// line.
func notesBlock(ws []string, status string) string {
	var b strings.Builder
	rest := ws
	if len(ws) > 0 && strings.HasPrefix(ws[0], "REPEAT:") {
		b.WriteString("> [!danger] " + oneLineMD(ws[0]) + "\n\n")
		rest = ws[1:]
	}
	switch len(rest) {
	case 0:
		b.WriteString("> [!note] No warnings: mailgate found nothing hidden or look-alike in the recipient, subject or body.\n\n")
	default:
		noun := "warnings"
		if len(rest) == 1 {
			noun = "warning"
		}
		fmt.Fprintf(&b, "> [!warning] Read before approving: %d %s\n", len(rest), noun)
		for _, w := range rest {
			b.WriteString("> - " + oneLineMD(w) + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(oneLineMD(status) + "\n\n")
	return b.String()
}

// oneLineMD keeps a note on one line whatever it holds (warnings quote the
// odd characters escaped already).
func oneLineMD(s string) string {
	return strings.NewReplacer("\r", "⟨CR⟩", "\n", "⟨LF⟩").Replace(s)
}

// renderFile lays out a vault file: frontmatter (a comment line, then the
// fields), a blank line, and the body area byte for byte.
func renderFile(comment string, kvs []kv, body string) []byte {
	var b strings.Builder
	b.WriteString("---\n# " + comment + "\n")
	for _, f := range kvs {
		b.WriteString(f.line())
	}
	b.WriteString("---\n\n")
	b.WriteString(body)
	return []byte(b.String())
}

func (f kv) line() string {
	switch {
	case f.list != nil:
		var b strings.Builder
		b.WriteString(f.key + ":\n")
		for _, v := range f.list {
			b.WriteString("  - " + yamlQuote(v) + "\n")
		}
		return b.String()
	case f.quoted:
		return f.key + ": " + yamlQuote(f.value) + "\n"
	}
	return f.key + ": " + f.value + "\n"
}

// yamlQuote renders s as a YAML double-quoted scalar that decodes back to s
// exactly: quotes and backslashes are escaped, and so is every character
// YAML would fold, treat as a line break or refuse (controls, NEL, U+2028,
// U+2029, surrogates, U+FEFF, U+FFFE/U+FFFF).
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r <= 0x7e,
			r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029,
			r >= 0xe000 && r <= 0xfffd && r != 0xfeff,
			r >= 0x10000 && r <= 0x10ffff:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
