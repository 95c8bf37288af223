package approval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
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

// try reads Approved/<name> and returns the approval when it matches, or the
// reason it does not. err is reserved for failures that must stop the search
// (the ledger being unreachable); unreadable files are reasons.
func (m *matcher) try(name string) (*Approval, string, error) {
	data, mtime, err := readRegular(m.v.path(DirApproved, name), m.v.o.MaxFileSize)
	switch {
	case errors.Is(err, errSkipped):
		return nil, err.Error(), nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, "gone", nil
	case err != nil:
		// ELOOP for a symlink (O_NOFOLLOW) lands here too.
		return nil, "unreadable or a symlink", nil
	}
	p, err := parseApproval(data)
	if err != nil {
		return nil, "unparsable", nil
	}
	exp, reason := m.check(p, mtime)
	if reason != "" {
		return nil, reason, nil
	}
	if m.v.o.Mode == ModeContent && m.v.o.Ledger != nil {
		ok, err := m.v.o.Ledger.Issued(m.ctx, strings.TrimSpace(p.RequestID), strings.ToLower(strings.TrimSpace(p.ContentSHA256)))
		if err != nil {
			return nil, "", fmt.Errorf("checking request ledger: %w", err)
		}
		if !ok {
			return nil, "not a request mailgate issued, or already used", nil
		}
	}
	return &Approval{
		Path:          m.v.path(DirApproved, name),
		Name:          name,
		Kind:          m.req.Kind,
		RequestID:     strings.TrimSpace(p.RequestID),
		ContentSHA256: strings.ToLower(strings.TrimSpace(p.ContentSHA256)),
		SHA256:        sum(data),
		Expires:       exp,
	}, "", nil
}

// check applies the matching rules to a parsed file and returns its expiry
// and "" when it matches, else a short reason.
func (m *matcher) check(p *parsedFile, mtime time.Time) (time.Time, string) {
	if Kind(strings.ToLower(strings.TrimSpace(p.Type))) != m.req.Kind {
		return time.Time{}, "type differs"
	}
	switch s := strings.ToLower(strings.TrimSpace(p.Status)); s {
	case "pending", "approved":
		// The move into Approved/ is the approval; editing status is optional.
	case "":
		return time.Time{}, "status missing"
	default:
		return time.Time{}, "status " + truncateForError([]byte(s))
	}
	if m.v.o.Mode == ModeRecipient {
		if r := bindingReason(p, m.req, m.addr); r != "" {
			return time.Time{}, r
		}
		return m.expiry(p, mtime)
	}
	if r := contentReason(p, m.req); r != "" {
		return time.Time{}, r
	}
	exp, r := m.expiry(p, mtime)
	if r != "" {
		return time.Time{}, r
	}
	switch h := strings.TrimSpace(p.ContentSHA256); {
	case h == "" && m.v.o.Ledger != nil:
		return time.Time{}, "content_sha256 missing"
	case h != "" && !strings.EqualFold(h, m.sha):
		return time.Time{}, "content_sha256 differs"
	}
	return exp, ""
}

// bindingReason checks what both modes bind: the recipient of a send, the
// thread of a reply.
func bindingReason(p *parsedFile, req Request, addr string) string {
	if req.Kind == KindReply {
		if strings.TrimSpace(p.ThreadID) != req.ThreadID {
			return "thread differs"
		}
		return ""
	}
	a, err := parseSingleAddress(p.To)
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
	if r := bindingReason(p, req, addr); r != "" {
		return r
	}
	if req.Kind == KindReply {
		if strings.TrimSpace(p.MessageID) != req.MessageID {
			return "message_id differs"
		}
		if req.To != "" || strings.TrimSpace(p.To) != "" {
			if a, err := parseSingleAddress(p.To); err != nil || strings.ToLower(a) != addr {
				return "recipient differs"
			}
		}
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
