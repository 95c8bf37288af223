package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Settling unknown outcomes. A Done file whose outcome is not known was
// claimed by a process that stopped between the claim and the record (its
// status is still the one it was approved with), or was recorded unknown
// (Gmail's answer was lost). Its fate is decided later from a witness: the
// audit log's send line, or the email itself in Sent, found by its fixed
// Message-ID (internal/gate's Settle asks them).

// Unsettled is a Done file without a known outcome.
type Unsettled struct {
	Name, Path string
	Status     string // unknown, or the status it was claimed with
	// ApprovalSHA256 is the hash of the file as it was claimed (the audit
	// log's approval_sha256 of its claim and send lines).
	ApprovalSHA256 string
	// MessageID is the email's Message-ID (outgoing_message_id), "" when
	// the file has none.
	MessageID string
	ClaimedAt time.Time // zero when unknown
	Final     Request   // as much of the email as the text and Sent need (kind, recipient, thread, subject)
	Recorded  bool      // an unknown outcome was recorded (not a claim cut short)
}

// claimStampRe is the time Claim puts into a Done file's name.
var claimStampRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.(\d{8}T\d{6}Z)-[0-9a-f]{6}\.md$`) })

// IsUnsettled reports whether a Done file's status is not an outcome.
func IsUnsettled(status string) bool {
	s := strings.ToLower(strings.TrimSpace(status))
	// A scheduled email (later.go) was not handed to Gmail yet.
	return s != StatusSent && s != StatusFailed && s != StatusScheduled
}

// Unsettled lists the Done files whose outcome is not known: all of them
// (sha ""), or those of the email whose content hash (Request.SHA256) is sha.
func (v *Vault) Unsettled(sha string) ([]Unsettled, error) {
	var names []string
	var err error
	if sha != "" {
		names, err = v.namesWithID(DirDone, nameID(sha))
	} else {
		names, err = readDirNames(filepath.Join(v.root, DirDone))
	}
	if err != nil {
		return nil, fmt.Errorf("listing Done/: %w", err)
	}
	var out []Unsettled
	for _, n := range names {
		if !candidateName(n) {
			continue
		}
		u, ok, err := v.unsettled(n)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, u)
		}
	}
	return out, nil
}

func (v *Vault) unsettled(name string) (Unsettled, bool, error) {
	path := v.path(DirDone, name)
	data, err := v.readOwn(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errSkipped) {
		return Unsettled{}, false, nil
	}
	if err != nil {
		return Unsettled{}, false, fmt.Errorf("reading Done/%s: %w", name, err)
	}
	p, err := parseApproval(data)
	if err != nil || !IsUnsettled(p.Status) {
		return Unsettled{}, false, nil
	}
	var f struct {
		ClaimedAt      string `yaml:"claimed_at"`
		ApprovalSHA256 string `yaml:"approval_sha256"`
	}
	_, _ = parseYAMLFront(data, &f)
	u := Unsettled{Name: name, Path: path, Status: strings.TrimSpace(p.Status), ApprovalSHA256: strings.TrimSpace(f.ApprovalSHA256),
		MessageID: strings.TrimSpace(p.OutgoingMsgID)}
	u.Recorded = strings.EqualFold(u.Status, StatusUnknown)
	if !u.Recorded {
		// Never rewritten since the claim: its bytes are the approval's.
		u.ApprovalSHA256 = sum(data)
	}
	u.ClaimedAt, _ = parseTime(f.ClaimedAt)
	if m := claimStampRe().FindStringSubmatch(name); u.ClaimedAt.IsZero() && m != nil {
		u.ClaimedAt, _ = time.Parse("20060102T150405Z", m[1])
	}
	u.Final = Request{Kind: Kind(strings.ToLower(strings.TrimSpace(p.Type))), To: p.To.first(), ThreadID: strings.TrimSpace(p.ThreadID), Subject: p.Subject,
		OutgoingMessageID: u.MessageID, Account: strings.TrimSpace(p.Account)}
	if u.Final.Kind == KindForward {
		u.Final.ToList = p.To
	}
	return u, true, nil
}

// Settlement is how an unknown outcome was decided, for the Done file.
type Settlement string

const (
	// SettledByAudit: the audit log holds the send's success line (the
	// Done file could not be rewritten then, e.g. the disk was full).
	SettledByAudit Settlement = "audit_log"
	// SettledBySent: the email was found in Sent by its Message-ID.
	SettledBySent Settlement = "sent_folder"
	// SettledAbsent: not in Sent long after the claim: it never left.
	SettledAbsent Settlement = "not_in_sent"
)

// Settle records o (sent or failed) in the unsettled Done file u, saying
// how it was learnt. The file is rewritten only if it is still unsettled.
func (v *Vault) Settle(u Unsettled, o Outcome, by Settlement) error {
	again, ok, err := v.unsettled(u.Name)
	if err != nil {
		return err
	}
	if !ok || again.ApprovalSHA256 != u.ApprovalSHA256 {
		return nil // settled meanwhile
	}
	c := &Claim{Approval: &Approval{Name: u.Name, Kind: u.Final.Kind, SHA256: u.ApprovalSHA256, Final: u.Final}, Path: u.Path, Name: u.Name,
		ClaimedAt: u.ClaimedAt, v: v}
	return c.record(o, by)
}

// settledText is what a settled Done file adds to its outcome sentence.
func settledText(by Settlement) string {
	switch by {
	case SettledByAudit:
		return " The outcome was recorded later from the audit log (the Done file could not be written at the time)."
	case SettledBySent:
		return " The outcome was not recorded when it was sent (mailgate stopped first); it was found later in Sent by its Message-ID."
	case SettledAbsent:
		return " mailgate stopped before recording this send's outcome; the email was not in Sent long after, so it never left."
	}
	return ""
}
