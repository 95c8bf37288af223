package agentmail

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Project maps a working directory (HumanKey, an absolute path) to a stable
// slug. Everything else belongs to one project.
type Project struct {
	ID        int64
	Slug      string
	HumanKey  string
	CreatedAt time.Time
}

// Agent is one registered identity within a project. Names are unique per
// project, case-insensitively.
type Agent struct {
	ID                int64
	ProjectID         int64
	Name              string
	Program           string
	Model             string
	TaskDescription   string
	InceptionAt       time.Time
	LastActiveAt      time.Time
	AttachmentsPolicy string
	ContactPolicy     Policy
}

// Importance of a message.
type Importance string

// The importance levels of the contract.
const (
	ImportanceLow    Importance = "low"
	ImportanceNormal Importance = "normal"
	ImportanceHigh   Importance = "high"
	ImportanceUrgent Importance = "urgent"
)

// ParseImportance accepts the four levels ("" means normal), case-insensitively.
func ParseImportance(s string) (Importance, error) {
	switch v := Importance(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return ImportanceNormal, nil
	case ImportanceLow, ImportanceNormal, ImportanceHigh, ImportanceUrgent:
		return v, nil
	}
	return "", invalid("importance %q is not valid: use low, normal, high or urgent", s)
}

// Policy is an agent's contact policy: who may put mail in its inbox.
type Policy string

// Contact policies. Mail a policy does not accept is held for the recipient,
// never dropped, until the recipient approves the sender.
const (
	// PolicyOpen accepts everyone.
	PolicyOpen Policy = "open"
	// PolicyAuto (the default) accepts agents of the same project, approved
	// contacts, and replies in threads the recipient takes part in.
	PolicyAuto Policy = "auto"
	// PolicyContactsOnly accepts approved contacts (and contact requests).
	PolicyContactsOnly Policy = "contacts_only"
	// PolicyBlockAll accepts nothing new; held mail waits for an explicit
	// approval of its sender or a change of policy.
	PolicyBlockAll Policy = "block_all"
)

// ParsePolicy accepts the four policies, case-insensitively.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(strings.TrimSpace(s))); p {
	case PolicyOpen, PolicyAuto, PolicyContactsOnly, PolicyBlockAll:
		return p, nil
	}
	return "", invalid("contact policy %q is not valid: use open, auto, contacts_only or block_all", s)
}

// Recipient kinds.
const (
	KindTo  = "to"
	KindCC  = "cc"
	KindBCC = "bcc"
)

// Message is one stored message. ThreadID is "" when the message starts no
// named thread; replies to it then use its id as their thread id.
type Message struct {
	ID          int64
	ProjectID   int64
	SenderID    int64
	SenderName  string
	ThreadID    string
	Subject     string
	BodyMD      string
	Importance  Importance
	AckRequired bool
	CreatedAt   time.Time
	ReplyTo     int64
	Recipients  []Recipient  // filled where the answer needs them
	Attachments []Attachment // filled where the answer shows them (metadata only)
}

// Thread is the thread m's replies go to: its ThreadID, or its own id when
// it starts no named thread.
func (m Message) Thread() string {
	if m.ThreadID != "" {
		return m.ThreadID
	}
	return strconv.FormatInt(m.ID, 10)
}

// Recipient is one recipient's copy of a message: its delivery, read and ack
// state. DeliveredAt is zero while the message is held by the recipient's
// contact policy.
type Recipient struct {
	MessageID   int64
	AgentID     int64
	AgentName   string
	ProjectID   int64
	Kind        string
	DeliveredAt time.Time
	HeldReason  string
	ReadAt      time.Time
	AckAt       time.Time
}

// Held reports whether the copy is waiting for the recipient's approval.
func (r Recipient) Held() bool { return r.DeliveredAt.IsZero() }

// InboxItem is a message as one recipient sees it.
type InboxItem struct {
	Message
	Kind   string
	ReadAt time.Time
	AckAt  time.Time
}

// Contact link statuses.
const (
	LinkPending  = "pending"
	LinkApproved = "approved"
	LinkBlocked  = "blocked"
)

// ContactLink is a directed permission: From may write to To once approved.
type ContactLink struct {
	ID          int64
	FromAgentID int64
	ToAgentID   int64
	FromName    string
	ToName      string
	FromProject string // human key
	ToProject   string // human key
	Status      string
	Reason      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ExpiresAt   time.Time // zero: never
}

// ApprovedAt reports whether the link is approved and unexpired at now.
func (l ContactLink) ApprovedAt(now time.Time) bool {
	return l.Status == LinkApproved && (l.ExpiresAt.IsZero() || l.ExpiresAt.After(now))
}

// Reservation is an advisory lease on a path or glob of a project.
type Reservation struct {
	ID          int64
	ProjectID   int64
	AgentID     int64
	AgentName   string
	PathPattern string
	Exclusive   bool
	Reason      string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	ReleasedAt  time.Time
}

// ActiveAt reports whether the reservation holds at now.
func (r Reservation) ActiveAt(now time.Time) bool {
	return r.ReleasedAt.IsZero() && r.ExpiresAt.After(now)
}

// ReservationConflict is an active reservation of another agent that overlaps
// a requested path. Reservations are advisory, so conflicts are reported next
// to the grant; callers wanting a hard failure can return one as an error.
type ReservationConflict struct {
	Path    string
	Holders []Reservation
}

func (c *ReservationConflict) Error() string {
	names := make([]string, 0, len(c.Holders))
	for _, h := range c.Holders {
		names = append(names, fmt.Sprintf("%s (%s, until %s)", h.AgentName, h.PathPattern, formatTS(h.ExpiresAt)))
	}
	return fmt.Sprintf("FILE_RESERVATION_CONFLICT: %s overlaps reservations held by %s", c.Path, strings.Join(names, ", "))
}

func (c *ReservationConflict) Unwrap() error { return ErrReservationConflict }
