package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Dead approvals. A file in Approved/ that the gate can never honour (it
// cannot be read, its frontmatter is broken, it is a link, mailgate never
// issued it, it was already used, it expired, or a file it attaches has
// changed since) is named as such wherever the human looks (mailgate
// approvals, approvals show, doctor) and in the agent's answer, with what
// to do: an approval that silently approves nothing costs a second request
// and a confused human.

// Deletion and asking again are the two ways out of every dead approval.
const (
	fixDelete = "delete it; the agent's next identical call writes a new request to approve"
	fixAgain  = "let the agent ask again: its next identical call writes a fresh request to approve (then delete this one)"
)

// DeadCheck tells live approvals from dead ones for the listings.
type DeadCheck struct {
	// AttachmentsDir is the folder attachments are sent from ("" skips the
	// attachment check).
	AttachmentsDir string
	Now            time.Time
}

// MarkDead sets Dead on the items in Approved/ that can never be used.
func (v *Vault) MarkDead(ctx context.Context, items []Item, c DeadCheck) {
	if c.Now.IsZero() {
		c.Now = v.o.Now()
	}
	for i := range items {
		if items[i].Folder == DirApproved {
			items[i].Dead = v.dead(ctx, &items[i], c)
		}
	}
}

// dead says why it (in Approved/) can never be used, and what to do; ""
// when nothing the files tell stops it.
func (v *Vault) dead(ctx context.Context, it *Item, c DeadCheck) string {
	if it.Invalid != "" {
		return invalidText(it.Invalid) + ": " + fixDelete
	}
	if it.Expired(c.Now) {
		return "it expired at " + it.Expires.UTC().Format(time.RFC3339) + ": " + fixAgain
	}
	if v.o.Mode == ModeContent {
		if strings.TrimSpace(it.RequestID) == "" || strings.TrimSpace(it.ContentSHA256) == "" {
			return "it is not a request mailgate wrote (no request_id or content_sha256), and APPROVAL_MODE=content honours only those: " + fixAgain
		}
		if used := v.usedAs(it.RequestID); used != "" {
			return "it is a copy of an approval already used (" + DirDone + "/" + used + "): " + fixDelete
		}
		if v.o.Ledger != nil {
			ok, err := v.o.Ledger.Issued(ctx, strings.TrimSpace(it.RequestID), strings.ToLower(strings.TrimSpace(it.ContentSHA256)))
			if err == nil && !ok {
				return "mailgate has no record of issuing this request (no ledger entry for its request_id and content): it was written or altered by hand, or copied from another mailgate: " + fixDelete
			}
		}
	}
	if c.AttachmentsDir != "" && it.Kind != KindForward {
		if why := attachmentChanged(c.AttachmentsDir, it.Attachments); why != "" {
			return why + ": " + fixAgain
		}
	}
	return ""
}

// invalidText puts the reason a file cannot be read in plain words.
func invalidText(why string) string {
	switch {
	case strings.Contains(why, syscall.ELOOP.Error()):
		return "it is a symbolic link, which mailgate never follows (approve the request file itself)"
	case strings.Contains(why, fs.ErrPermission.Error()) || strings.Contains(why, "permission denied"):
		return "mailgate cannot read it (permission denied)"
	case strings.Contains(why, "not a regular file"):
		return "it is not a regular file"
	case strings.Contains(why, "larger than"):
		return "it is too large to be a request (" + why + ")"
	}
	return "its frontmatter (the lines between the --- markers) is broken: " + why
}

// usedAs is the name in Done/ of a consumed copy of the request with this
// request_id, or "".
func (v *Vault) usedAs(rid string) string {
	rid = strings.TrimSpace(rid)
	i := strings.IndexByte(rid, '-')
	if i <= 0 {
		return ""
	}
	names, err := v.namesWithID(DirDone, rid[:i])
	if err != nil {
		return ""
	}
	for _, n := range names {
		it, err := v.item(DirDone, n)
		if err == nil && it.Invalid == "" && strings.TrimSpace(it.RequestID) == rid {
			return n
		}
	}
	return ""
}

var attachLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+) \(.*sha256 ([0-9a-f]{64})\)$`) })

// attachmentChanged says which attachment of a request no longer matches
// the file of that name in the attachments folder ("" when every one
// still does, or cannot be told).
func attachmentChanged(dir string, lines []string) string {
	for _, l := range lines {
		m := attachLineRe().FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		name, want := m[1], m[2]
		found, match := false, false
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != name || match {
				return nil
			}
			found = true
			if fileSHA256(path) == want {
				match = true
				return fs.SkipAll
			}
			return nil
		})
		switch {
		case found && !match:
			return fmt.Sprintf("the attached file %s changed since the request was written (its SHA-256 no longer matches)", name)
		case !found:
			return fmt.Sprintf("the attached file %s is no longer in the attachments folder %s", name, dir)
		}
	}
	return ""
}

func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
