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
)

// Instructions is written into every request file for the human.
const Instructions = "Move this file to Approved/ to allow this exact email to be sent once, or to Rejected/ to refuse it."

// EnsurePending writes the request file Pending_Approval/<NAME>.md for req
// and returns NAME.md, where NAME is EMAIL_SEND_ or EMAIL_REPLY_ followed by
// the first 12 hex digits of req.SHA256(). It is idempotent: while a current
// request file for the same content sits in Pending_Approval/ (same
// content_sha256, not expired, and — with a ledger — still issued) it is
// returned untouched. An expired, altered or unissued file under that name is
// replaced. Once the earlier file has left Pending_Approval/ (consumed in
// Done/, or an unusable copy in Approved/) a fresh request with a new
// request_id is written, with a note pointing at the earlier one, because a
// human must be able to approve the same email again, e.g. after a failed
// send. (A request in Rejected/ never gets here: Find answers ErrRejected.)
func (v *Vault) EnsurePending(ctx context.Context, req Request) (string, error) {
	if err := req.Validate(); err != nil {
		return "", err
	}
	sha := req.SHA256()
	st := stem(req.Kind, sha)
	name := st + ".md"
	path := v.path(DirPending, name)
	now := v.o.Now()
	current, exists, err := v.pendingCurrent(ctx, path, req.Kind, sha, now)
	if err != nil || current {
		return name, err
	}
	id := st + "-" + randomHex(4)
	if v.o.Ledger != nil {
		// Issue before the file exists, so no request file ever names an
		// id the ledger does not know.
		if err := v.o.Ledger.Issue(ctx, id, sha, now); err != nil {
			return "", fmt.Errorf("writing request %s: %w", name, err)
		}
	}
	data := renderRequest(req, sha, id, now, now.Add(v.o.TTL), v.history(st))
	err = writeAtomic(path, data, exists)
	if isExist(err) {
		// Another process wrote it first; use theirs if it is current.
		if current, _, cerr := v.pendingCurrent(ctx, path, req.Kind, sha, now); cerr == nil && current {
			return name, nil
		}
		err = writeAtomic(path, data, true)
	}
	if err != nil {
		return "", fmt.Errorf("writing request %s: %w", name, err)
	}
	return name, nil
}

// pendingCurrent reports whether path holds a usable request for sha, and
// whether anything is at path at all.
func (v *Vault) pendingCurrent(ctx context.Context, path string, k Kind, sha string, now time.Time) (current, exists bool, err error) {
	data, _, err := readRegular(path, v.o.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, true, nil // a symlink or oversized file: replace it
	}
	p, err := parseApproval(data)
	if err != nil || Kind(p.Type) != k || p.ContentSHA256 != sha || p.Status != "pending" {
		return false, true, nil
	}
	if exp, err := parseTime(p.Expires); err != nil || !now.Before(exp) {
		return false, true, nil
	}
	if v.o.Ledger != nil {
		ok, err := v.o.Ledger.Issued(ctx, p.RequestID, sha)
		if err != nil {
			return false, true, fmt.Errorf("checking request ledger: %w", err)
		}
		return ok, true, nil
	}
	return true, true, nil
}

// history describes earlier files of the same request outside
// Pending_Approval/, for the human. It reads Done/, so it runs only when a
// new request file is written, never on the send path.
func (v *Vault) history(st string) string {
	var notes []string
	if fi, err := os.Lstat(v.path(DirApproved, st+".md")); err == nil && fi.Mode().IsRegular() {
		notes = append(notes, "Approved/"+st+".md holds an earlier approval of this email that can no longer be used (expired, altered or already used); approve this file instead.")
	}
	if names, err := readDirNames(filepath.Join(v.root, DirDone)); err == nil {
		last := ""
		for _, n := range names {
			if strings.HasPrefix(n, st+".") && n > last {
				last = n
			}
		}
		if last != "" {
			notes = append(notes, "An identical email was handled before: Done/"+last+". Approving this file sends it again.")
		}
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
	path := filepath.Join(dir, stem(req.Kind, sha)+".md")
	kvs := []kv{{"type", string(req.Kind), false}, {"status", "dev_mode", false}}
	kvs = append(kvs, requestFields(req)...)
	kvs = append(kvs,
		kv{"logged_at", now.Format(time.RFC3339), false},
		kv{"content_sha256", sha, false},
		kv{"note", note, true})
	data := renderFile("mailgate DEV_MODE: this email was NOT sent.", kvs, req.Body)
	if err := writeAtomic(path, data, true); err != nil {
		return "", fmt.Errorf("writing dev-mode log: %w", err)
	}
	return path, nil
}

// kv is one frontmatter line; quoted values are written as YAML
// double-quoted scalars.
type kv struct {
	key, value string
	quoted     bool
}

func requestFields(req Request) []kv {
	var kvs []kv
	if req.Kind == KindReply {
		kvs = append(kvs, kv{"thread_id", req.ThreadID, true}, kv{"message_id", req.MessageID, true})
	}
	if req.To != "" {
		kvs = append(kvs, kv{"to", strings.TrimSpace(req.To), true})
	}
	return append(kvs, kv{"subject", req.Subject, true})
}

func renderRequest(req Request, sha, id string, created, expires time.Time, note string) []byte {
	kvs := []kv{
		{"type", string(req.Kind), false},
		{"status", "pending", false},
		{"request_id", id, false},
	}
	kvs = append(kvs, requestFields(req)...)
	kvs = append(kvs,
		kv{"created", created.UTC().Format(time.RFC3339), false},
		kv{"expires", expires.UTC().Format(time.RFC3339), false},
		kv{"content_sha256", sha, false},
		kv{"instructions", Instructions, true})
	if w := hiddenContentWarning(req); w != "" {
		kvs = append(kvs, kv{"warning", w, true})
	}
	if note != "" {
		kvs = append(kvs, kv{"note", note, true})
	}
	return renderFile("mailgate approval request. "+Instructions, kvs, req.Body)
}

// renderFile lays out a vault file: frontmatter (a comment line, then the
// fields), a blank line, and the body byte for byte.
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
	if f.quoted {
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

// hiddenContentWarning flags content a Markdown preview may not show as
// sent: HTML (comments, tags that CSS can hide) and invisible or
// direction-changing characters. The human is told to read the source.
func hiddenContentWarning(req Request) string {
	text := req.Subject + "\n" + req.Body
	var found []string
	if strings.Contains(text, "<!--") || hasHTMLTag(text) {
		found = append(found, "HTML")
	}
	if strings.ContainsFunc(text, func(r rune) bool {
		return r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e ||
			r >= 0x2060 && r <= 0x2064 || r >= 0x2066 && r <= 0x2069 || r == 0xfeff || r == 0xad
	}) {
		found = append(found, "invisible or direction-changing characters")
	}
	if len(found) == 0 {
		return ""
	}
	return "The email contains " + strings.Join(found, " and ") +
		" that a Markdown preview may hide or alter; read this file in source mode before approving."
}

func hasHTMLTag(s string) bool {
	for i := strings.IndexByte(s, '<'); i >= 0 && i+1 < len(s); {
		c := s[i+1]
		if c == '/' || c == '!' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
