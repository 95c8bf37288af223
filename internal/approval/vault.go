package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Vault folders, created under the root if missing.
const (
	DirPending  = "Pending_Approval"
	DirApproved = "Approved"
	DirRejected = "Rejected"
	DirDone     = "Done"
	DirLogs     = "Logs"
)

// Sentinel errors. Find, Claim and EnsurePending wrap them; test with
// errors.Is.
var (
	// ErrNoApproval: nothing in Approved/ matches the call (see *NoMatchError
	// for why the closest files were refused).
	ErrNoApproval = errors.New("no matching approval")
	// ErrRejected: the human moved this exact request to Rejected/.
	ErrRejected = errors.New("rejected by the approver")
	// ErrAlreadyClaimed: another call consumed the approval first.
	ErrAlreadyClaimed = errors.New("approval already claimed")
	// ErrChanged: the approval file changed between Find and Claim.
	ErrChanged = errors.New("approval changed since it was matched")
	// ErrVaultFull: the vault's disk has too little space left to record
	// a send's outcome, so nothing is claimed or sent.
	ErrVaultFull = errors.New("the vault's disk is (nearly) full")
)

// NoMatchError is returned by Find when no approval matches. Reasons lists,
// for the log, why the closest candidates were refused ("<name>.md: subject
// differs"); it never holds bodies.
//
// Unusable, in content mode, names the files in Approved/ that are this
// very email's request (by the id in their names) but can never be used,
// each with why: the human made an approval that approves nothing.
type NoMatchError struct{ Reasons, Unusable []string }

func (e *NoMatchError) Error() string {
	if len(e.Reasons) == 0 {
		return ErrNoApproval.Error()
	}
	return ErrNoApproval.Error() + " (" + strings.Join(e.Reasons, "; ") + ")"
}

func (e *NoMatchError) Is(target error) bool { return target == ErrNoApproval }

// RejectedError is returned by Find when the request sits in Rejected/:
// moved there by the approver, or refused by mailgate because the approver
// changed its recipient or thread (Refused, with the Reason).
type RejectedError struct {
	Name    string
	Reason  string
	Refused bool
}

func (e *RejectedError) Error() string {
	msg := ErrRejected.Error() + ": " + DirRejected + "/" + e.Name
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// Options configure a Vault. Zero values take the defaults.
type Options struct {
	Mode        Mode          // default ModeContent
	TTL         time.Duration // expiry written into new requests; default 24h
	MaxFileSize int64         // larger files are ignored; default 1 MiB
	Now         func() time.Time
	// MaxPending and MaxPendingPerRecipient bound the requests waiting in
	// Pending_Approval/ (defaults DefaultMaxPending, DefaultMaxPendingPerRecipient).
	MaxPending, MaxPendingPerRecipient int
	// FaultWrite, when set, is asked before every rewrite of a vault file
	// and its error fails the write: the seam tests use to inject a full
	// disk (ENOSPC) where the platform gives no other way.
	FaultWrite func(path string) error
	// Ledger, when set, records every request mailgate issues; in content
	// mode only approvals whose request_id and content_sha256 were issued
	// and not yet consumed are honoured. nil: no ledger.
	Ledger Ledger
}

// Vault is the approval folder tree.
type Vault struct {
	root string
	o    Options
}

// Open prepares the vault at root (absolute), creating its folders 0700.
func Open(root string, o Options) (*Vault, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("opening vault: path %q is not absolute", root)
	}
	switch o.Mode {
	case "":
		o.Mode = ModeContent
	case ModeContent, ModeRecipient:
	default:
		return nil, fmt.Errorf("opening vault: unknown approval mode %q", o.Mode)
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 1 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxPendingPerRecipient <= 0 {
		o.MaxPendingPerRecipient = DefaultMaxPendingPerRecipient
	}
	for _, d := range []string{DirPending, DirApproved, DirRejected, DirDone, DirLogs} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return nil, fmt.Errorf("opening vault: %w", err)
		}
	}
	return &Vault{root: root, o: o}, nil
}

// Root returns the vault's absolute path.
func (v *Vault) Root() string { return v.root }

// TTL is how long a request stays approvable.
func (v *Vault) TTL() time.Duration { return v.o.TTL }

// Mode returns the approval mode in force.
func (v *Vault) Mode() Mode { return v.o.Mode }

func (v *Vault) path(dir, name string) string { return filepath.Join(v.root, dir, name) }

// Approval is a file in Approved/ that matched a call.
type Approval struct {
	Path string // absolute path in Approved/
	Name string // file name in Approved/
	Kind Kind
	// RequestID and ContentSHA256 as the file states them (possibly empty
	// for a human-written recipient-mode file). ContentSHA256 is the hash of
	// the request as the agent asked for it.
	RequestID, ContentSHA256 string
	// SHA256 is the hash of the file's bytes as matched: the exact file the
	// human approved. Claim re-checks it.
	SHA256  string
	Expires time.Time // zero when the file has none (recipient mode)
	// Final is the email to send: the agent's request, or — when the human
	// corrected the subject or body before approving — the request with the
	// file's subject and body. The file is the source of truth.
	Final Request
	// Edited lists what the approver changed ("subject", "body"); empty
	// when Final is the agent's request.
	Edited []string
	// MessageIDInherited: Final.OutgoingMessageID was first fixed for an
	// earlier request of this email whose outcome is not known, so the
	// gate asks Sent for it before sending.
	MessageIDInherited bool
}

// Find looks for an approval of req. It returns a *RejectedError when the
// request is in Rejected/ (or an approval of it had to be refused), a
// *NoMatchError when nothing in Approved/ matches, or the approval.
//
// In content mode the candidates are the files in Approved/ whose name holds
// the request's id (the first 128 bits of its content hash, see
// requestName): the request file as written, a copy ("… (1).md"), or a file
// the human edited, which keeps its name. Renaming a request file to
// something else withdraws it. In recipient mode every .md file is a
// candidate. Candidates are tried in name order; hidden names, non-.md
// names, symlinks, other non-regular files and files over MaxFileSize are
// skipped.
//
// A candidate that is a request mailgate issued for exactly this email
// (content_sha256 and, with a ledger, request_id) but whose recipient or
// thread the human changed is refused for good: an approval can correct
// what is said, never to whom. It is moved to Rejected/ with status refused
// and the reason in its frontmatter, and Find answers *RejectedError with
// that reason, unless another candidate matches.
func (v *Vault) Find(ctx context.Context, req Request) (*Approval, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	sha := req.SHA256()
	id := nameID(sha)
	if re, err := v.rejected(id, req, sha); err != nil || re != nil {
		if err != nil {
			return nil, err
		}
		return nil, re
	}

	m := matcher{v: v, ctx: ctx, req: req, sha: sha, addr: strings.ToLower(req.Address()), now: v.o.Now()}
	var names []string
	var err error
	if v.o.Mode == ModeContent {
		names, err = v.namesWithID(DirApproved, id)
	} else {
		names, err = readDirNames(filepath.Join(v.root, DirApproved))
		sort.Strings(names)
	}
	if err != nil {
		return nil, fmt.Errorf("finding approval: %w", err)
	}
	var reasons, unusable []string
	var refusals []refusal
	for _, name := range names {
		if !candidateName(name) {
			continue
		}
		a, reason, ref, err := m.try(name)
		if err != nil || a != nil {
			return a, err
		}
		if ref != nil {
			refusals = append(refusals, *ref)
		} else if len(reasons) < 3 && reason != "gone" {
			reasons = append(reasons, name+": "+reason)
		}
		if ref == nil && reason != "gone" && v.o.Mode == ModeContent && len(unusable) < 3 {
			unusable = append(unusable, DirApproved+"/"+name+": "+reason)
		}
	}
	for _, r := range refusals {
		if re, err := v.refuse(r); err != nil {
			return nil, err
		} else if re != nil {
			return nil, re
		}
	}
	return nil, &NoMatchError{Reasons: reasons, Unusable: unusable}
}

// rejected looks in Rejected/ for this exact request. A file a human moved
// there still says pending or approved: the first time the gate sees it,
// its status is rewritten to rejected, so the file tells the truth.
func (v *Vault) rejected(id string, req Request, sha string) (*RejectedError, error) {
	names, err := v.namesWithID(DirRejected, id)
	if err != nil {
		return nil, fmt.Errorf("checking rejected requests: %w", err)
	}
	for _, name := range names {
		path := v.path(DirRejected, name)
		data, _, err := readRegular(path, v.o.MaxFileSize)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errSkipped) {
				continue
			}
			return nil, fmt.Errorf("checking rejected requests: %w", err)
		}
		p, err := parseApproval(data)
		if err != nil {
			continue
		}
		if h := strings.TrimSpace(p.ContentSHA256); h != "" {
			if !strings.EqualFold(h, sha) {
				continue
			}
		} else if contentReason(p, req) != "" {
			continue
		}
		status := strings.ToLower(strings.TrimSpace(p.Status))
		if status == "pending" || status == "approved" || status == "" {
			if err := v.markRejected(path, "moved to Rejected/ by the approver", ""); err == nil {
				status = StatusRejected
			}
		}
		return &RejectedError{Name: name, Reason: strings.TrimSpace(p.Reason), Refused: status == StatusRefused}, nil
	}
	return nil, nil
}

// candidateName keeps visible .md names: editors' lock and swap files and
// mailgate's own temporary files start with a dot.
func candidateName(name string) bool {
	return !strings.HasPrefix(name, ".") && strings.EqualFold(filepath.Ext(name), ".md")
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// errSkipped marks a file that is not a regular file or is too large.
var errSkipped = errors.New("skipped")

// readOwn reads a vault file that mailgate has written into or rewrites (a
// request with its notes and added fields, a Done file): up to
// MaxFileSize, the agent's part, and 64 KiB of room for mailgate's.
func (v *Vault) readOwn(path string) ([]byte, error) {
	data, _, err := readRegular(path, v.o.MaxFileSize+64<<10)
	return data, err
}

// readRegular reads path without following a symlink in its last component
// and without blocking on a FIFO; anything but a regular file of at most
// max bytes is errSkipped. It returns the bytes and the modification time.
func readRegular(path string, max int64) ([]byte, time.Time, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, time.Time{}, fmt.Errorf("%w: not a regular file", errSkipped)
	}
	if fi.Size() > max {
		return nil, time.Time{}, fmt.Errorf("%w: larger than %d bytes", errSkipped, max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if int64(len(data)) > max {
		return nil, time.Time{}, fmt.Errorf("%w: larger than %d bytes", errSkipped, max)
	}
	return data, fi.ModTime(), nil
}

func sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
