package approval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// Claim is an approval consumed into Done/: whatever happens next, it can
// never authorise another send.
type Claim struct {
	Approval  *Approval
	Path      string // absolute path of the file in Done/
	Name      string // file name in Done/
	ClaimedAt time.Time
	v         *Vault
}

// Done-file statuses written by Record. A Done file whose status is none of
// these (still the pending/approved it arrived with) was claimed by a process
// that stopped before recording the outcome: the email may or may not have
// left.
const (
	StatusSent    = "sent"
	StatusFailed  = "failed"
	StatusUnknown = "unknown"
)

// Claim consumes a by moving it from Approved/ into Done/ under a unique
// name, before anything is sent. Exactly one caller in any process can win:
// rename(2) of one source name succeeds once, and with a ledger the
// request's consumption is then recorded once, so of several copies of one
// request at most one is sent. Losers get ErrAlreadyClaimed.
//
// The file is re-read (never through a symlink) and its hash compared with
// the one Find matched both before the rename and after it, in Done/; a file
// altered in between is not sent from (ErrChanged; if it was already moved
// it stays consumed, marked failed). Approved/ is fsynced after the rename,
// before Claim returns, so a power loss after the send cannot resurrect the
// approval.
func (v *Vault) Claim(ctx context.Context, a *Approval) (*Claim, error) {
	if err := v.verify(a.Path, a.SHA256); err != nil {
		return nil, err
	}
	if err := v.checkSpace(a.Path); err != nil {
		return nil, err
	}
	now := v.o.Now()
	base := strings.TrimSuffix(a.Name, filepath.Ext(a.Name))
	var c *Claim
	for attempt := 0; ; attempt++ {
		name := base + "." + now.UTC().Format("20060102T150405Z") + "-" + randomHex(3) + ".md"
		err := atomicfile.RenameNoReplace(a.Path, v.path(DirDone, name))
		if err == nil {
			c = &Claim{Approval: a, Path: v.path(DirDone, name), Name: name, ClaimedAt: now, v: v}
			break
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("claiming %s: %w", a.Name, ErrAlreadyClaimed)
		}
		if !isExist(err) || attempt == 3 {
			return nil, fmt.Errorf("claiming %s: %w", a.Name, err)
		}
	}
	// The rename decided between processes racing for this file; the
	// ledger decides between copies of one request (an agent may copy an
	// approval within Approved/, or back from Done/). It is consulted after
	// the rename, never before: a process killed between a ledger update
	// and the rename would leave an approval in Approved/ that the ledger
	// refuses forever. Killed here instead, the approval is in Done/, not
	// sent and not consumed: visible, and never sent twice.
	if v.o.Mode == ModeContent && v.o.Ledger != nil {
		if err := v.o.Ledger.Consume(ctx, a.RequestID, a.ContentSHA256, now); err != nil {
			if errors.Is(err, ErrAlreadyClaimed) || errors.Is(err, ErrNotIssued) {
				_ = c.Record(Outcome{Status: StatusFailed, Error: "another copy of this request was already used; nothing was sent"})
				return nil, fmt.Errorf("claiming %s: %w", a.Name, ErrAlreadyClaimed)
			}
			_ = c.Record(Outcome{Status: StatusFailed, Error: "the request ledger could not record the claim; nothing was sent: " + err.Error()})
			return nil, fmt.Errorf("claiming %s: %w", a.Name, err)
		}
	}
	// The removal from Approved/ is what must survive a power loss: that is
	// what keeps the approval from being used again. (On journaling
	// filesystems the same commit carries the new Done/ entry; elsewhere a
	// power loss could at worst lose the Done file, never resurrect the
	// approval, and the audit log's claim line names it.)
	if err := atomicfile.SyncDir(filepath.Join(v.root, DirApproved)); err != nil {
		return c, fmt.Errorf("claiming %s: syncing Approved/: %w", a.Name, err)
	}
	if err := v.verify(c.Path, a.SHA256); err != nil {
		_ = c.Record(Outcome{Status: StatusFailed, Error: "approval changed while it was being claimed; nothing was sent"})
		return nil, err
	}
	return c, nil
}

// verify re-reads path and checks its hash.
func (v *Vault) verify(path, want string) error {
	data, _, err := readRegular(path, v.o.MaxFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("claiming %s: %w", filepath.Base(path), ErrAlreadyClaimed)
	case err != nil:
		return fmt.Errorf("claiming %s: %w (%v)", filepath.Base(path), ErrChanged, err)
	case sum(data) != want:
		return fmt.Errorf("claiming %s: %w", filepath.Base(path), ErrChanged)
	}
	return nil
}

// Outcome is what became of a claimed send.
type Outcome struct {
	Status                        string // StatusSent, StatusFailed or StatusUnknown
	SentAt                        time.Time
	GmailMessageID, GmailThreadID string
	Error                         string
}

// Record writes the claim (claimed_at, approval_sha256, original_sha256
// (see originalField) and the final_sha256 of what was sent,
// edited_by_approver when the human corrected it) and o into the Done
// file's frontmatter, and replaces its notes with what happened,
// atomically; the email body is left byte for byte as it was. Claim itself does not rewrite the file, to keep
// the send path to one rewrite.
func (c *Claim) Record(o Outcome) error { return c.record(o, "") }

func (c *Claim) record(o Outcome, by Settlement) error {
	a := c.Approval
	kvs := []kv{
		{key: "status", value: o.Status},
		{key: "approval_sha256", value: a.SHA256},
	}
	if !c.ClaimedAt.IsZero() {
		kvs = append(kvs, kv{key: "claimed_at", value: c.ClaimedAt.UTC().Format(time.RFC3339Nano)})
	}
	if a.Final.Kind != "" && by == "" {
		kvs = append(kvs, originalField(a), kv{key: "final_sha256", value: a.Final.SHA256()})
	}
	if a.Final.OutgoingMessageID != "" {
		kvs = append(kvs, kv{key: "outgoing_message_id", value: a.Final.OutgoingMessageID, quoted: true})
	}
	if by != "" {
		kvs = append(kvs, kv{key: "settled_by", value: string(by)})
	}
	if len(a.Edited) > 0 {
		kvs = append(kvs, kv{key: "edited_by_approver", value: strings.Join(a.Edited, ", "), quoted: true})
	}
	if !o.SentAt.IsZero() {
		kvs = append(kvs, kv{key: "sent_at", value: o.SentAt.UTC().Format(time.RFC3339Nano)})
	}
	if o.GmailMessageID != "" {
		kvs = append(kvs, kv{key: "gmail_message_id", value: o.GmailMessageID, quoted: true})
	}
	if o.GmailThreadID != "" {
		kvs = append(kvs, kv{key: "gmail_thread_id", value: o.GmailThreadID, quoted: true})
	}
	msg := ""
	if o.Error != "" {
		msg = strings.Join(strings.Fields(o.Error), " ")
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		kvs = append(kvs, kv{key: "error", value: msg, quoted: true})
	}
	kvs = append(kvs, kv{key: "recorded_at", value: c.v.o.Now().UTC().Format(time.RFC3339Nano)})
	what := outcomeText(a, o, msg) + settledText(by)
	kvs = append(kvs, kv{key: "instructions", value: what, quoted: true})
	notes := outcomeNotes(a, o, what)
	drop := managedKeys
	if by != "" {
		// A settlement knows less than the claim did: what an earlier
		// record of it wrote about the email stays.
		drop = []string{"status", "sent_at", "gmail_message_id", "gmail_thread_id", "error", "recorded_at", "instructions"}
	}
	if err := c.v.rewriteFile(c.Path, "mailgate: the record of a consumed approval (moving this file does nothing).", drop, kvs, notes); err != nil {
		return fmt.Errorf("recording outcome in %s: %w", c.Name, err)
	}
	return nil
}

// outcomeText is the one sentence a Done file says about itself.
func outcomeText(a *Approval, o Outcome, errMsg string) string {
	if a.Final.Kind.IsSettings() {
		return settingsOutcomeText(a.Final, o, errMsg) // kind_settings.go
	}
	if a.Final.Kind == KindTrash {
		return trashOutcomeText(a.Final, o, errMsg) // kind_action.go
	}
	to := a.Final.Address()
	if to == "" && a.Final.ThreadID != "" {
		to = "thread " + a.Final.ThreadID
	}
	if to != "" {
		to = " to " + to
	}
	switch o.Status {
	case StatusSent:
		return fmt.Sprintf("Sent%s at %s (Gmail message %s). This file is the record; moving it does nothing.", to, o.SentAt.UTC().Format(time.RFC3339), o.GmailMessageID)
	case StatusFailed:
		return fmt.Sprintf("Not sent%s: %s. This approval is used up; the agent's next identical call writes a new request.", to, errMsg)
	default:
		return fmt.Sprintf("Outcome unknown%s: %s. The email may have been sent: check Sent before approving it again. This approval is used up.", to, errMsg)
	}
}

func outcomeNotes(a *Approval, o Outcome, what string) string {
	kind := map[string]string{StatusSent: "success", StatusFailed: "failure"}[o.Status]
	if kind == "" {
		kind = "warning"
	}
	notes := "> [!" + kind + "] " + oneLineMD(what) + "\n"
	if len(a.Edited) > 0 {
		notes += "\nThe approver corrected the " + strings.Join(a.Edited, " and ") + " before approving: the text below is what " +
			map[bool]string{true: "was sent", false: "was to be sent"}[o.Status == StatusSent] + ".\n"
	}
	return notes + "\n"
}

// originalField is the record's original_sha256: the hash of the request as
// the agent asked for it (as content_sha256 says), unless the file already
// has that key. A reply or a forward's request names the message it
// answers there (keepOriginal, README): the record keeps that name, so the
// approval page still shows the original on the Done file.
func originalField(a *Approval) kv {
	return kv{key: "original_sha256", value: a.ContentSHA256, ifAbsent: true}
}

// managedKeys are the frontmatter keys Record owns in Done files.
var managedKeys = []string{"status", "claimed_at", "approval_sha256", "original_sha256", "final_sha256", "edited_by_approver",
	"sent_at", "gmail_message_id", "gmail_thread_id", "error", "recorded_at", "instructions", "settled_by"}

// minFree is the space a claim leaves for its record besides three times
// the file's size (the rewritten copy, its temporary file, and slack).
const minFree = 256 << 10

// checkSpace refuses a claim whose outcome could not be recorded for want
// of space (where the platform tells the free space): a send whose Done
// file cannot be rewritten is only known from the audit log.
func (v *Vault) checkSpace(path string) error {
	free, ok := freeBytes(filepath.Join(v.root, DirDone))
	if !ok {
		return nil
	}
	var size int64
	if fi, err := os.Lstat(path); err == nil {
		size = fi.Size()
	}
	if need := 3*size + minFree; free < need {
		return fmt.Errorf("claiming %s: %w: %d bytes free, %d needed to record the outcome; nothing was sent: free some space and call again", filepath.Base(path), ErrVaultFull, free, need)
	}
	return nil
}
