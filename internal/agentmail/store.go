package agentmail

import (
	"context"
	"fmt"
	"time"
)

// Store is the storage port of the Service. Its two engines are
// agentmail/sqlite and agentmail/postgres (amstore opens the one the store
// needs); neither touches the rules here, because the Service only ever
// talks to a Tx.
type Store interface {
	// Write runs fn in one short write transaction (on SQLite, BEGIN
	// IMMEDIATE, so concurrent processes queue instead of failing). fn may
	// run again when the store retries a transaction that lost a lock race,
	// so it must not have effects outside tx.
	Write(ctx context.Context, fn func(Tx) error) error
	// Read runs fn on a consistent read-only snapshot.
	Read(ctx context.Context, fn func(Tx) error) error
	// Close releases the store.
	Close() error
}

// ScopedWriter is a Store whose writers on one contended resource (a
// project's messages) can queue for it instead of racing
// and running again. Writers with different scopes, or writing through
// Write, do not wait for each other, and every guarantee of Write still
// holds without the queue (it only spares the retries). The PostgreSQL
// store implements it; on SQLite every writer already queues on the file's
// lock.
type ScopedWriter interface {
	WriteScoped(ctx context.Context, scope Scope, fn func(Tx) error) error
}

// CommittedWriter is a Store that can run a write transaction at READ
// COMMITTED instead of Write's serializable isolation. Such a transaction
// never fails with a serialization error and never makes a serializable
// writer fail, so writers that would otherwise conflict with everything
// (a grant) run beside the others. Each statement sees every transaction
// committed before it began. The PostgreSQL store implements it; on SQLite,
// whose writers already run one at a time, Write is the same thing.
type CommittedWriter interface {
	WriteCommitted(ctx context.Context, fn func(Tx) error) error
}

// EachReader is a Store that can run a read without a transaction around
// it, each statement on a snapshot of its own (PostgreSQL: no BEGIN and
// COMMIT, two of a fetch_inbox's four round trips). It is for reads whose
// statements need no common snapshot: one statement, or a statement and
// then rows written in the same transaction as the rows it found (a
// message's attachments and copies), whose only change afterwards is
// moving forward (a copy delivered, read, acknowledged), so the answer is
// the store's state at the first statement with those rows' state a moment
// later. On SQLite, where a transaction costs no round trip, Read serves.
type EachReader interface {
	ReadEach(ctx context.Context, fn func(Tx) error) error
}

// ReservationScope is the scope of a project's reservation lock: a
// serializable writer that must be ordered with the project's grants (a
// channel claim refuses what is held) queues on it before its transaction
// begins; a grant takes the same lock with its insert
// (ReservationTx.GrantReservations).
func ReservationScope(projectID int64) Scope {
	return Scope{Key: fmt.Sprintf("reservations:%d", projectID), Always: true}
}

// Scope names a contended resource for ScopedWriter.
type Scope struct {
	Key string
	// Always queues every writer before its transaction begins: for
	// resources where any two writers conflict. Otherwise a writer's first
	// attempt runs alongside the others and only one that lost a race
	// queues to run again.
	Always bool
}

// Tx is what one transaction can do. Missing rows are reported as
// ErrNotFound (bare; the Service turns them into agent-facing errors) and
// unique-constraint races as ErrConflict.
type Tx interface {
	ProjectTx
	MessageTx
	ContactTx
	ReservationTx
	AttachmentTx
	HoldersTx
	EscalationTx
	ProductTx
}

// ProjectTx reads and writes projects and agents.
type ProjectTx interface {
	ProjectByID(ctx context.Context, id int64) (Project, error)
	ProjectBySlug(ctx context.Context, slug string) (Project, error)
	ProjectByHumanKey(ctx context.Context, humanKey string) (Project, error)
	// InsertProject stores p and sets p.ID.
	InsertProject(ctx context.Context, p *Project) error
	// Projects lists every project by id.
	Projects(ctx context.Context) ([]Project, error)

	AgentByID(ctx context.Context, id int64) (Agent, error)
	// AgentByName matches case-insensitively within the project.
	AgentByName(ctx context.Context, projectID int64, name string) (Agent, error)
	// Agents lists a project's agents by id.
	Agents(ctx context.Context, projectID int64) ([]Agent, error)
	// InsertAgent stores a and sets a.ID.
	InsertAgent(ctx context.Context, a *Agent) error
	// UpdateAgent rewrites the mutable profile fields of a (by a.ID).
	UpdateAgent(ctx context.Context, a Agent) error
	// TouchAgent moves the agent's last activity forward to at.
	TouchAgent(ctx context.Context, agentID int64, at time.Time) error
	// UnreadCounts maps agent id to its count of delivered, unread copies.
	UnreadCounts(ctx context.Context, projectID int64) (map[int64]int, error)
}

// InboxQuery selects one recipient's delivered copies, newest first.
type InboxQuery struct {
	AgentID     int64
	ProjectID   int64 // the agent's project (threads are per project)
	Limit       int
	UnreadOnly  bool
	UrgentOnly  bool   // ack_required only (the integration contract's urgent_only)
	ThreadID    string // "" = any; also matches the message whose id is ThreadID
	Since       time.Time
	WithBodies  bool
	AckRequired bool // only ack_required copies not yet acknowledged
}

// SearchQuery is a full-text search within a project.
type SearchQuery struct {
	ProjectID int64
	Match     *QueryNode // the parsed query (see ParseQuery), which the engine renders in its syntax; nil for LIKE
	Terms     []string   // the query's words: LIKE terms when Match is nil or fails; what a store ranks the newest Window matches by (RankRecent)
	ViewerID  int64      // 0 = the whole project; else messages sent or delivered to this agent
	Limit     int
	Window    int // see MessageTx.Search
}

// MessageTx reads and writes messages and per-recipient state.
type MessageTx interface {
	// InsertMessage stores m and its Recipients, setting m.ID.
	InsertMessage(ctx context.Context, m *Message) error
	// MessageByID returns the message with its sender name (no recipients).
	MessageByID(ctx context.Context, id int64) (Message, error)
	// Recipients returns every copy of the given messages, with agent names,
	// in the order they were addressed.
	Recipients(ctx context.Context, messageIDs []int64) (map[int64][]Recipient, error)
	// Copy returns one recipient's copy.
	Copy(ctx context.Context, messageID, agentID int64) (Recipient, error)
	// Inbox lists delivered copies for q.AgentID.
	Inbox(ctx context.Context, q InboxQuery) ([]InboxItem, error)
	// Thread returns the messages of a thread (thread_id = id, or the message
	// whose id is id), oldest first, at most limit.
	Thread(ctx context.Context, projectID int64, threadID string, limit int, withBodies bool) ([]Message, error)
	// SetRead records the first read of a copy (later calls keep it).
	SetRead(ctx context.Context, messageID, agentID int64, at time.Time) error
	// SetAck records the first acknowledgement, and the read if missing.
	SetAck(ctx context.Context, messageID, agentID int64, at time.Time) error
	// HeldCopies lists copies held for recipientID (from senderID, or from
	// anyone when senderID is 0), oldest first.
	HeldCopies(ctx context.Context, recipientID, senderID int64) ([]Recipient, error)
	// Deliver releases a held copy at at.
	Deliver(ctx context.Context, messageID, agentID int64, at time.Time) error
	// Search runs q.Match through the full-text index, or q.Terms through
	// LIKE when Match is nil. When at most q.Window messages match, they come
	// ranked by relevance (bm25) and ranked is true; otherwise the newest
	// q.Window matches come newest first, with bodies, for the caller to
	// rank (bm25 over a match set that large reads whole posting lists),
	// or, ranked true, the store ranked them itself (RankRecent by q.Terms)
	// and returns the first q.Limit.
	Search(ctx context.Context, q SearchQuery) (ms []Message, ranked bool, err error)
	// LastMailActivity is the newest message the agent sent or had delivered.
	LastMailActivity(ctx context.Context, agentID int64) (time.Time, error)
	// InThread reports whether the agent sent or received a message of the thread.
	InThread(ctx context.Context, agentID, projectID int64, threadID string) (bool, error)
	// MessagesAfter returns the project's messages whose id is above
	// afterID, oldest first, at most limit, without bodies.
	MessagesAfter(ctx context.Context, projectID, afterID int64, limit int) ([]Message, error)
}

// ContactTx reads and writes directed contact links.
type ContactTx interface {
	// Link returns the link from → to without agent names (ErrNotFound if none).
	Link(ctx context.Context, fromAgentID, toAgentID int64) (ContactLink, error)
	// LinkPair returns both links between a and b (zero links where none),
	// in one statement: every send needs both directions.
	LinkPair(ctx context.Context, a, b int64) (ab, ba ContactLink, err error)
	// UpsertLink creates or rewrites the link l.From → l.To, setting l.ID.
	UpsertLink(ctx context.Context, l *ContactLink) error
	// LinksFrom lists links the agent created (outgoing), with names.
	LinksFrom(ctx context.Context, agentID int64) ([]ContactLink, error)
	// LinksTo lists links pointing at the agent (incoming), with names.
	LinksTo(ctx context.Context, agentID int64) ([]ContactLink, error)
}

// ReservationQuery selects reservations of a project.
type ReservationQuery struct {
	ProjectID  int64
	AgentID    int64     // 0 = any agent
	ActiveAt   time.Time // non-zero: only unreleased and unexpired at this time
	IDs        []int64   // non-empty: only these
	Patterns   []string  // non-empty: only these path patterns
	IncludeAll bool      // include released/expired (ignored when ActiveAt is set)
}

// ReservationTx reads and writes file reservations.
type ReservationTx interface {
	Reservations(ctx context.Context, q ReservationQuery) ([]Reservation, error)
	ReservationByID(ctx context.Context, id int64) (Reservation, error)
	// InsertReservations stores new reservations of one agent with the same
	// exclusivity, reason and times (one grant), setting their IDs, in one
	// statement: a 50-path grant must not cost 50 round trips.
	InsertReservations(ctx context.Context, rs []*Reservation) error
	// SetReservationExpiry moves a reservation's expiry.
	SetReservationExpiry(ctx context.Context, id int64, expires time.Time) error
	// ReleaseReservation marks a reservation released at at.
	ReleaseReservation(ctx context.Context, id int64, at time.Time) error
	// GrantReservations is InsertReservations for a grant, ordered with
	// the writers that refuse what is held (a channel claim), which queue
	// on the project's ReservationScope: on PostgreSQL the statement takes
	// that scope's lock (a transaction advisory lock) before it inserts,
	// and holds it until the transaction ends, so a claim either sees the
	// grant or committed before the grant's conflicts are read. SQLite's
	// writers run one at a time already.
	GrantReservations(ctx context.Context, rs []*Reservation) error
}
