// Package agentmail is the coordination core for teams of coding agents:
// projects, memorable agent identities, messages with threads and per-recipient
// read/ack state, contact policies, and advisory file reservations.
//
// It speaks the mcp_agent_mail contract that existing clients already use
// (tool names, argument names and answer shapes), but fixes what that
// server's users suffer from: a requested name is never replaced silently,
// mail to a recipient who does not accept it yet is held rather than dropped,
// fetching an inbox never changes read state, and many processes (one per
// agent, each started by its own client) share one store safely.
//
// The package knows nothing about MCP or SQL. Service holds the rules; the
// storage port (Store, Tx) is implemented by agentmail/sqlite today and can be
// implemented by another database later without touching the rules. The
// answer types in views.go carry the contract's JSON shapes, so every
// transport renders the same answers.
package agentmail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// NameMode decides what register_agent does with a requested name that is not
// valid (see ValidateName).
type NameMode string

const (
	// NameCoerce keeps a valid requested name and replaces an invalid one with
	// a generated name, saying so in the answer. The default.
	NameCoerce NameMode = "coerce"
	// NameStrict refuses an invalid requested name with an explanation.
	NameStrict NameMode = "strict"
	// NameAlwaysAuto always generates a name; a requested one is reported as
	// ignored.
	NameAlwaysAuto NameMode = "always_auto"
)

// ParseNameMode accepts the names of the modes ("" means NameCoerce).
func ParseNameMode(s string) (NameMode, error) {
	switch NameMode(s) {
	case "", NameCoerce:
		return NameCoerce, nil
	case NameStrict, NameAlwaysAuto:
		return NameMode(s), nil
	}
	return "", fmt.Errorf("unknown agent name mode %q (use coerce, strict or always_auto)", s)
}

// Options configure a Service. The zero value is usable.
type Options struct {
	// Now is the clock; tests fabricate time with it. Default time.Now.
	Now func() time.Time
	// Logger receives internal failures (stderr in production). Default: discard.
	Logger *slog.Logger
	// NameMode is the agent-name enforcement mode. Default NameCoerce.
	NameMode NameMode
	// Rand returns a pseudo-random int in [0, n); used to pick generated
	// names. Default math/rand/v2.
	Rand func(n int) int
	// DirExists reports whether a project's directory is a project tree on
	// this machine whose file times reservation staleness may read.
	// Default: ProjectTreeOK.
	DirExists func(path string) bool
	// BindSenders lets a session send only as the agents it holds
	// (registered, or resumed with their registration token); by default
	// sender_name is trusted as in the reference (see identity.go).
	BindSenders bool
	// Protected are mailgate's own files and folders (its home, the vault,
	// the Gmail token and credentials): no project may be one, hold one or
	// lie inside one (see projecttree.go).
	Protected []ProtectedPath
	// Escalation configures the ACK escalation (escalation.go); the zero
	// value escalates nothing.
	Escalation EscalationOptions
}

// Service is the agent-mail core. It is safe for concurrent use; every write
// is one short transaction of the Store, so several processes may each run a
// Service on the same store.
type Service struct {
	st     Store
	now    func() time.Time
	log    *slog.Logger
	mode   NameMode
	rand   func(int) int
	dirOK  func(string) bool
	fsScan func(root string, pats []*Pattern) []time.Time

	bindSenders bool
	protected   []ProtectedPath
	tokens      sync.Map // agent id → the registration token this process last answered

	projects projectCache
	agents   agentCache
	esc      EscalationOptions
}

// writeIn is st.Write, queued on scope where the store can (ScopedWriter).
func (s *Service) writeIn(ctx context.Context, scope Scope, fn func(Tx) error) error {
	if sw, ok := s.st.(ScopedWriter); ok {
		return sw.WriteScoped(ctx, scope, fn)
	}
	return s.st.Write(ctx, fn)
}

// writeCommitted is st.WriteCommitted where the store has it (see
// CommittedWriter), else st.Write.
func (s *Service) writeCommitted(ctx context.Context, fn func(Tx) error) error {
	if cw, ok := s.st.(CommittedWriter); ok {
		return cw.WriteCommitted(ctx, fn)
	}
	return s.st.Write(ctx, fn)
}

// readEach is st.ReadEach where the store has it (see EachReader), else
// st.Read.
func (s *Service) readEach(ctx context.Context, fn func(Tx) error) error {
	if r, ok := s.st.(EachReader); ok {
		return r.ReadEach(ctx, fn)
	}
	return s.st.Read(ctx, fn)
}

// messageScope is the queue of a project's senders that lost a race: two
// sends conflict only sometimes (one reads the agent or copies the other
// writes), so first attempts run side by side.
func messageScope(projectKey string) Scope { return Scope{Key: "messages:" + projectKey} }

// New returns a Service over st.
func New(st Store, opts Options) (*Service, error) {
	if st == nil {
		return nil, errors.New("creating agent-mail service: no store")
	}
	mode, err := ParseNameMode(string(opts.NameMode))
	if err != nil {
		return nil, fmt.Errorf("creating agent-mail service: %w", err)
	}
	s := &Service{st: st, now: opts.Now, log: opts.Logger, mode: mode, rand: opts.Rand, dirOK: opts.DirExists, bindSenders: opts.BindSenders,
		protected: opts.Protected, esc: opts.Escalation}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.rand == nil {
		s.rand = defaultRand
	}
	if s.dirOK == nil {
		// Never scan a protected folder's file times either.
		s.dirOK = func(root string) bool { return ProjectTreeOK(root) && ProjectKeyProblem(root, s.protected) == "" }
	}
	s.fsScan = latestModTime
	if l, ok := st.(interface{ SetLogger(*slog.Logger) }); ok {
		l.SetLogger(s.log) // stores working in the background report there
	}
	return s, nil
}

// Logger is the service's logger, for adapters that report its failures.
func (s *Service) Logger() *slog.Logger { return s.log }

// Close releases the store.
func (s *Service) Close() error { return s.st.Close() }

// clock returns the current time truncated to microseconds, the store's
// resolution, so what is written is exactly what is read back.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Sentinel errors. Every refusal the agent should read is an *Error wrapping
// one of these, so callers decide with errors.Is and show Error() verbatim.
var (
	ErrNotFound            = errors.New("not found")
	ErrProjectNotFound     = fmt.Errorf("project %w", ErrNotFound)
	ErrAgentNotFound       = fmt.Errorf("agent %w", ErrNotFound)
	ErrMessageNotFound     = fmt.Errorf("message %w", ErrNotFound)
	ErrReservationNotFound = fmt.Errorf("file reservation %w", ErrNotFound)
	ErrInvalidArgument     = errors.New("invalid argument")
	ErrInvalidName         = fmt.Errorf("agent name: %w", ErrInvalidArgument)
	// ErrReservationActive refuses to force-release a reservation whose
	// holder is still active.
	ErrReservationActive = errors.New("file reservation is active")
	// ErrReservationConflict is what a *ReservationConflict unwraps to.
	ErrReservationConflict = errors.New("file reservation conflict")
	// ErrConflict reports a write that lost a race with another process
	// (a unique constraint); retrying the call is safe.
	ErrConflict = errors.New("concurrent update")
)

// Error is a refusal meant for the agent: Message says what went wrong and
// what to do; Code is the contract's error type (NOT_FOUND, INVALID_ARGUMENT,
// …); Err is the sentinel for errors.Is.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func newError(code string, sentinel error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: sentinel}
}

func invalid(format string, args ...any) *Error {
	return newError("INVALID_ARGUMENT", ErrInvalidArgument, format, args...)
}

// plain is an INVALID_ARGUMENT refusal wrapping sentinel.
func plain(sentinel error, format string, args ...any) *Error {
	return newError("INVALID_ARGUMENT", sentinel, format, args...)
}
