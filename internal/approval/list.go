package approval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Listing and deciding from a terminal (mailgate approvals). A decision is
// exactly the move a human makes in a file manager, so the gate cannot tell
// the two apart and needs no other path.

// Item is one request file, summarised for a person.
type Item struct {
	Folder    string // DirPending, DirApproved, DirRejected or DirDone
	Name      string // file name
	Path      string // absolute path
	Kind      Kind
	Status    string // the frontmatter status (in Done/: sent, failed, unknown, or what it was claimed with)
	RequestID string
	To        string // as written, unmasked (several are joined by ", ")
	// ToList is every To as written (To joins them); Cc and Bcc are the
	// copies as written; Attachments the attachment
	// lines (name, size, SHA-256); HTMLSHA256 is set when an HTML part goes
	// with the text.
	ToList, Cc, Bcc, Attachments []string
	HTMLSHA256                   string
	// Account is the Gmail account that sends or acts ("": a file
	// without one, which is the default account's).
	Account string
	// From is the send-as address the email goes out from ("": the
	// account's default).
	From string
	// SendAt is the time a scheduled email is sent (zero: when approved).
	SendAt time.Time
	// HTMLFrom and HTMLLinks describe the HTML part (html_from,
	// html_links): where it came from and every link it holds.
	HTMLFrom  string
	HTMLLinks []string
	ThreadID  string
	Subject   string
	Created   time.Time // zero when absent or unparsable
	Expires   time.Time // zero when absent or unparsable
	SentAt    time.Time // Done/ only
	Error     string    // Done/ only: the recorded failure
	ModTime   time.Time
	MessageID string
	// OutgoingMessageID is the Message-ID the email goes out with, fixed
	// when the request was written (see MessageIDFor).
	OutgoingMessageID string
	DraftID           string // send_draft (kind_action.go)
	Target            string // the settings kinds (kind_settings.go)
	// ContentSHA256 is the hash of the request as issued.
	ContentSHA256 string
	// OriginalSHA256 names the kept message a reply answers or a forward
	// forwards (Vault.Original); "" when none was kept.
	OriginalSHA256 string
	// Body is the email body as the file holds it, line endings as written
	// (what is sent, once CRLF and lone CR are made line breaks).
	Body string
	// Warnings are the file's warnings (frontmatter `warnings:`), Reason
	// why it was refused or rejected, Instructions what it says to do.
	Warnings     []string
	Reason       string
	Instructions string
	Edited       string // Done/ only: what the approver corrected
	// Moved is the name the file got in its new folder (Approve, Reject).
	Moved string
	// Dead, for a file in Approved/ (see MarkDead), says why the gate can
	// never use it and what the human should do; "" when it can be used.
	Dead string
	// Invalid says why the file is not a readable request ("" when it is);
	// the gate ignores such files, and the listing shows them so a human
	// notices a broken edit.
	Invalid string
}

// Expired reports whether the item has an expiry at or before now.
func (it *Item) Expired(now time.Time) bool {
	return !it.Expires.IsZero() && !now.Before(it.Expires)
}

// ListFolders are the folders List reads, in display order.
var ListFolders = []string{DirPending, DirApproved, DirRejected, DirDone}

// Sentinel errors of Resolve, Approve and Reject.
var (
	ErrUnknownID   = errors.New("no request file matches")
	ErrAmbiguousID = errors.New("more than one request file matches")
)

// IDError is returned when an id matches no file, or several.
type IDError struct {
	ID      string
	Err     error    // ErrUnknownID or ErrAmbiguousID
	Matches []string // "Folder/name" of the candidates
	Note    string   // where the id was found instead, when it was
}

func (e *IDError) Error() string {
	msg := fmt.Sprintf("%q: %v", e.ID, e.Err)
	if len(e.Matches) > 0 {
		msg += " (" + strings.Join(e.Matches, ", ") + "); give more of the id"
	}
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg
}

func (e *IDError) Unwrap() error { return e.Err }

// List returns the request files of the given folders (default
// ListFolders), each folder's items oldest first. Hidden and non-.md files
// are skipped, as the gate skips them.
func (v *Vault) List(folders ...string) ([]Item, error) {
	if len(folders) == 0 {
		folders = ListFolders
	}
	var items []Item
	for _, dir := range folders {
		names, err := readDirNames(filepath.Join(v.root, dir))
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		var these []Item
		for _, name := range names {
			if !candidateName(name) {
				continue
			}
			it, err := v.item(dir, name)
			if errors.Is(err, fs.ErrNotExist) {
				continue // moved while we listed
			}
			if err != nil {
				return nil, err
			}
			these = append(these, it)
		}
		sort.Slice(these, func(i, j int) bool {
			a, b := these[i], these[j]
			if !a.Created.Equal(b.Created) {
				return a.Created.Before(b.Created)
			}
			return a.Name < b.Name
		})
		items = append(items, these...)
	}
	return items, nil
}

// extraFields are keys read leniently for the listing: a hand-edited value
// of the wrong shape loses only that value.
type extraFields struct {
	SentAt       string   `yaml:"sent_at"`
	Error        string   `yaml:"error"`
	Warnings     []string `yaml:"warnings"`
	Instructions string   `yaml:"instructions"`
	Edited       string   `yaml:"edited_by_approver"`
	Original     string   `yaml:"original_sha256"`
}

func (v *Vault) item(dir, name string) (Item, error) {
	it := Item{Folder: dir, Name: name, Path: v.path(dir, name)}
	data, mod, err := readRegular(it.Path, v.o.MaxFileSize+4096)
	if errors.Is(err, errSkipped) {
		it.Invalid = strings.TrimPrefix(err.Error(), errSkipped.Error()+": ")
		return it, nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return it, err
		}
		// A symlink (ELOOP) or an unreadable file: shown, never followed.
		it.Invalid = err.Error()
		return it, nil
	}
	it.ModTime = mod
	p, err := parseApproval(data)
	if err != nil {
		it.Invalid = err.Error()
		return it, nil
	}
	it.Kind, it.Status, it.RequestID = Kind(p.Type), p.Status, p.RequestID
	it.To, it.ThreadID, it.Subject = p.To.one(), p.ThreadID, p.Subject
	it.ToList, it.Cc, it.Bcc, it.Attachments, it.HTMLSHA256 = p.To, p.Cc, p.Bcc, p.Attachments, p.HTMLSHA256
	it.From, it.Account = strings.TrimSpace(p.From), strings.TrimSpace(p.Account)
	it.SendAt, _ = parseTime(p.SendAt)
	it.MessageID, it.ContentSHA256, it.Body, it.Reason = p.MessageID, p.ContentSHA256, p.RawBody, p.Reason
	it.DraftID, it.OutgoingMessageID, it.Target = p.DraftID, strings.TrimSpace(p.OutgoingMsgID), p.Target
	it.HTMLFrom, it.HTMLLinks = p.HTMLFrom, p.HTMLLinks
	it.Created, _ = parseTime(p.Created)
	it.Expires, _ = parseTime(p.Expires)
	var d extraFields
	if _, err := parseYAMLFront(bytes.TrimPrefix(data, utf8BOM), &d); err == nil {
		it.Warnings, it.Instructions = d.Warnings, d.Instructions
		it.OriginalSHA256 = strings.TrimSpace(d.Original)
		if dir == DirDone {
			it.SentAt, _ = parseTime(d.SentAt)
			it.Error, it.Edited = d.Error, d.Edited
		}
	}
	return it, nil
}

// Resolve finds the one item in folders (default ListFolders) that id names:
// its request_id, its file name (with or without .md), or a unique prefix
// of either or of the id in its name (the hex after the last "_" of a
// request name, or after EMAIL_SEND_ / EMAIL_REPLY_ in older files).
// Matching ignores case. Exact matches win over prefixes.
func (v *Vault) Resolve(id string, folders ...string) (*Item, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, &IDError{ID: id, Err: ErrUnknownID}
	}
	items, err := v.List(folders...)
	if err != nil {
		return nil, err
	}
	var exact, prefix []*Item
	for i := range items {
		switch matchID(&items[i], id) {
		case 2:
			exact = append(exact, &items[i])
		case 1:
			prefix = append(prefix, &items[i])
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = prefix
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, &IDError{ID: id, Err: ErrUnknownID}
	}
	e := &IDError{ID: id, Err: ErrAmbiguousID}
	for _, m := range matches {
		e.Matches = append(e.Matches, m.Folder+"/"+m.Name)
	}
	return nil, e
}

// matchID: 2 exact, 1 prefix, 0 none.
func matchID(it *Item, id string) int {
	id = strings.ToLower(id)
	name := strings.ToLower(it.Name)
	base := strings.TrimSuffix(name, ".md")
	rid := strings.ToLower(it.RequestID)
	if id == name || id == base || (rid != "" && id == rid) {
		return 2
	}
	hash := base
	for _, p := range []string{"email_send_", "email_reply_"} {
		hash = strings.TrimPrefix(hash, p)
	}
	nameHash := ""
	if i := strings.LastIndexByte(base, '_'); i >= 0 {
		nameHash = base[i+1:]
		if strings.HasPrefix(nameHash, "repeat-") {
			if j := strings.LastIndexByte(base[:i], '_'); j >= 0 {
				nameHash = base[j+1 : i]
			}
		}
	}
	if strings.HasPrefix(name, id) || (rid != "" && strings.HasPrefix(rid, id)) || strings.HasPrefix(hash, id) ||
		(nameHash != "" && strings.HasPrefix(nameHash, id)) {
		return 1
	}
	return 0
}

// Approve moves the request id names from Pending_Approval/ (or Rejected/,
// for a change of mind) to Approved/, marked approved, and returns it as it
// was before the move. An expired request is refused: the gate would ignore
// it. A file of that name already in Approved/ (an earlier, unusable copy)
// is left alone: the request gets a free name that still holds its id.
func (v *Vault) Approve(id string) (*Item, error) {
	return v.ApproveAs(id, Decision{Via: ViaTerminal})
}

// Reject moves the request id names from Pending_Approval/ (or Approved/,
// withdrawing an approval not yet used) to Rejected/.
func (v *Vault) Reject(id string) (*Item, error) {
	return v.RejectAs(id, Decision{Via: ViaTerminal})
}
