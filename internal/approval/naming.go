package approval

import (
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// idHex is how many hex digits of the content hash name a request: 32, so
// 128 bits. Two different emails cannot share a name by chance, and finding
// two that do is as hard as a 128-bit collision. (Tests shorten it to build
// real collisions.)
var idHex = 32

// nameID is the part of every file name of a request that identifies its
// content: the first idHex hex digits of Request.SHA256.
func nameID(sha string) string { return sha[:idHex] }

// requestName is the readable, unique name of a request file:
//
//	<UTC date>_<recipient>_<subject>_<id>.md
//
// for example 2026-11-25_bob-example-com_quarterly-report_<32 hex>.md. The
// recipient and subject are lower-case ASCII slugs (anything else becomes
// "-", so a look-alike letter shows as a gap); a reply without a resolved
// recipient uses "thread-<id>". A request for an email that was handled
// before (see Pending.Repeat) ends in _repeat-<n>, n counting the earlier
// consumed copies plus this one.
func requestName(req Request, sha string, created time.Time, repeat int) string {
	name := created.UTC().Format(time.DateOnly) + "_" + recipientSlug(req) + "_" + slug(req.Subject, 40, "no-subject") + "_" + nameID(sha)
	if repeat > 1 {
		name += "_repeat-" + strconv.Itoa(repeat)
	}
	return name + ".md"
}

// recipientSlug is the recipient part of a request's file name; the
// per-recipient bound on pending requests counts names by it.
func recipientSlug(req Request) string {
	if req.Kind.IsAction() {
		return actionSlug(req) // kind_action.go
	}
	if a := req.Address(); a != "" {
		return slug(a, 40, "unknown")
	}
	return slug("thread-"+req.ThreadID, 40, "unknown")
}

// slug lower-cases s and keeps ASCII letters and digits, turning every run
// of anything else into one "-", cut to max bytes.
func slug(s string, max int, empty string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= max {
				break
			}
			continue
		}
		dash = true
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return empty
	}
	return out
}

// namesWithID lists the visible .md files of dir whose name holds id, in
// name order: a request's own file, a file manager's copy ("… (1).md"), a
// repeat, and in Done/ every consumed copy. A file the human renamed to
// something else is no longer the request's. Files named by earlier
// versions (EMAIL_SEND_ or EMAIL_REPLY_ and the first 12 hex of the hash)
// are found too, so requests waiting in an existing vault stay usable; the
// content hash inside any file is what decides, never its name.
func (v *Vault) namesWithID(dir, id string) ([]string, error) {
	names, err := readDirNames(filepath.Join(v.root, dir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if candidateName(n) && hasID(n, id) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func hasID(name, id string) bool {
	n := strings.ToLower(name)
	if strings.Contains(n, id) {
		return true
	}
	if len(id) < 12 {
		return false
	}
	return strings.HasPrefix(n, "email_send_"+id[:12]) || strings.HasPrefix(n, "email_reply_"+id[:12])
}
