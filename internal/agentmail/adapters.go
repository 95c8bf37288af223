package agentmail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// What the tool sets beside the core (agentmail/channels, agentmail/mailboxset)
// use of it. A tool set is an adapter: it keeps its own tables behind its own
// storage port, and runs the core's rules through this API inside its own
// transactions (whose Tx is the core's Tx plus the set's tables), so a
// channel message or a mailbox send is ordinary agent mail.

// Port is a tool set's storage port: the guarantees of Store (Write may run
// fn again, so fn must have no effect outside its transaction; Read sees
// one snapshot) for the set's transactions T, which are the core's Tx
// with the set's tables. A tool set builds it on any engine's
// amsql.Runner (its SQLStore); amstore wires them.
type Port[T Tx] interface {
	Write(ctx context.Context, fn func(T) error) error
	// WriteScoped is Write queued on scope where the engine queues (see
	// ScopedWriter); on SQLite it is Write.
	WriteScoped(ctx context.Context, scope Scope, fn func(T) error) error
	Read(ctx context.Context, fn func(T) error) error
}

// ProjectOnce creates a tool set's project on its first call, once per
// process (the zero value is ready).
type ProjectOnce struct {
	mu   sync.Mutex
	done bool
}

// Ensure creates the project key on s unless an earlier call did.
func (o *ProjectOnce) Ensure(ctx context.Context, s *Service, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	if _, err := s.EnsureProject(ctx, key); err != nil {
		return err
	}
	o.done = true
	return nil
}

// MaxBodyBytes is the largest message body the core stores.
const MaxBodyBytes = maxBodyBytes

// NewError returns a refusal meant for the agent (see Error).
func NewError(code string, sentinel error, format string, args ...any) *Error {
	return newError(code, sentinel, format, args...)
}

// Invalid returns an INVALID_ARGUMENT refusal wrapping ErrInvalidArgument.
func Invalid(format string, args ...any) *Error { return invalid(format, args...) }

// Now is the service's clock, truncated to the store's resolution (a
// microsecond), so what a tool set writes is exactly what it reads back.
func (s *Service) Now() time.Time { return s.clock() }

// ProjectIn resolves a project key (an absolute path or a slug) inside tx,
// through the service's cache.
func (s *Service) ProjectIn(ctx context.Context, tx Tx, key string) (Project, error) {
	return s.project(ctx, tx, key)
}

// HeldElsewhere reports whether a live session other than ctx's holds agent
// a's identity: then a tool set must not act as a.
func (s *Service) HeldElsewhere(ctx context.Context, tx Tx, a Agent, now time.Time) (bool, error) {
	v, err := s.mayResume(ctx, tx, a, "", now)
	return !v.ok, err
}

// CheckPaths bounds the paths of one tool set's call (claims) as
// file_reservation_paths bounds its own; field names the argument.
func CheckPaths(field string, paths []string) error { return checkPaths(field, paths) }

// ChannelAgentNameProblem applies register_agent's syntax to a name a
// channels client registers (see channelAgentNameProblem), or returns "".
func ChannelAgentNameProblem(name string) string { return channelAgentNameProblem(name) }

// RoleProblem explains why a channels role cannot be used, or returns "".
func RoleProblem(role string) string { return roleProblem(role) }

// EnsureCompatAgent returns the project's agent named name, creating it with
// the given program when missing. A tool set's identities bypass the name rules
// of register_agent (their names come from another system), but stay
// bounded and visible: the name becomes a header of the Gmail mirror and a
// line of the archive (a mailbox name is a tmux window or AGENT_NAME, which
// only the local user sets).
func EnsureCompatAgent(ctx context.Context, tx Tx, p Project, name, program string, now time.Time) (Agent, error) {
	a, err := tx.AgentByName(ctx, p.ID, name)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return a, err
	}
	if problem := coreAgentNameProblem(name); problem != "" {
		return Agent{}, invalid("agent name %q cannot be used: %s. Rename the tmux window (or AGENT_NAME).", name, problem)
	}
	a = Agent{ProjectID: p.ID, Name: name, Program: program, Model: "unknown", InceptionAt: now, LastActiveAt: now,
		AttachmentsPolicy: "auto", ContactPolicy: PolicyAuto}
	return a, tx.InsertAgent(ctx, &a)
}

// FailureText is what an adapter tells the agent when op failed with err:
// a refusal (*Error) verbatim, since it says what to do; a cancelled call as
// such; anything else as a generic retryable failure, its details logged.
// The MCP tools and `mailgate mailbox` both word failures with it.
func FailureText(ctx context.Context, log *slog.Logger, op string, err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Message
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s was cancelled before it finished; nothing is lost, call it again", op)
	}
	log.ErrorContext(ctx, "tool failed", "tool", op, "err", err) // with the call's request_id
	return fmt.Sprintf("internal error in %s: the store could not complete the call (details are in the server log); it is safe to retry", op)
}
