package agentmail

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/ctxkey"
)

// Who may use an agent identity. The reference lets anyone who names an
// agent act as it: register_agent with a taken name silently resumes that
// identity, and sender_name is taken at its word. Two agents (another
// program, model or session) could then share one inbox and one set of
// reservations without either knowing. mailgate keeps the reference's
// "register again to update" for the same agent and tells everyone else:
//
//   - register_agent binds the identity to the MCP session that registered
//     it and answers a registration_token (only its SHA-256 is stored);
//   - registering the name again resumes it when the caller is that session,
//     or passes the token, or when the holding session is gone: its process
//     has ended on this host, or its session closed in this process (the
//     transport says so, WithSessionLiveness), or the identity shows no
//     activity for holdLive. That is the reference's "register again": an
//     agent whose client restarted gets its name back at once;
//   - anyone else is refused (strict) or gets a new name (coerce), and the
//     answer says why and how the real holder resumes.
//
// sender_name on the messaging tools is the caller's claim, as in the
// reference: any session may send as any agent of the project. With
// Options.BindSenders a session may send only as agents it holds.

// holdLive is how recently an identity must have been active for another
// session's claim on it to be refused: the inactivity after which a
// reservation's holder counts as gone (staleAgentAfter).
const holdLive = staleAgentAfter

// ErrNameHeld refuses a name another live session holds.
var ErrNameHeld = fmt.Errorf("agent name held by another session: %w", ErrInvalidArgument)

// ErrNotHolder refuses to send as an agent the session does not hold
// (Options.BindSenders).
var ErrNotHolder = errors.New("sender not held by this session")

// AgentHolder is who holds an agent identity.
type AgentHolder struct {
	AgentID   int64
	Session   string // the MCP session that registered or resumed it
	TokenHash string // hex SHA-256 of the registration token
	BoundAt   time.Time
}

// HoldersTx is what identity binding needs from a transaction.
type HoldersTx interface {
	// AgentHolder returns who holds an agent (ErrNotFound: nobody yet).
	AgentHolder(ctx context.Context, agentID int64) (AgentHolder, error)
	// SetAgentHolder binds an agent, replacing any earlier holder.
	SetAgentHolder(ctx context.Context, h AgentHolder) error
}

// sessionKey carries the caller's session.
var sessionKey = ctxkey.New[string]("agentmail.session")

// WithSession tags ctx with the caller's session: a key unique to one MCP
// session of one process (the transport makes it). Calls without one share
// the session "" (in-process callers, tests).
func WithSession(ctx context.Context, session string) context.Context {
	return sessionKey.With(ctx, session)
}

func sessionOf(ctx context.Context) string { return sessionKey.Value(ctx) }

// livenessKey carries the transport's SessionLiveness.
var livenessKey = ctxkey.New[SessionLiveness]("agentmail.liveness")

// SessionLiveness tells whether the session with a key is still there:
// known is false when the transport cannot tell (another process's session
// on another host, say), and the identity's activity decides.
type SessionLiveness func(session string) (live, known bool)

// WithSessionLiveness lets the service ask the transport whether the session
// holding an identity is still there, so an agent whose client restarted (a
// new stdio process) resumes its name at once.
func WithSessionLiveness(ctx context.Context, f SessionLiveness) context.Context {
	return livenessKey.With(ctx, f)
}

// holderGone reports whether the transport knows the holding session ended.
func holderGone(ctx context.Context, session string) bool {
	f := livenessKey.Value(ctx)
	if f == nil || session == "" {
		return false
	}
	live, known := f(session)
	return known && !live
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func newToken() string { return "amreg_" + rand.Text() }

// holdVerdict is whether a caller may resume an existing identity.
type holdVerdict struct {
	ok       bool
	badToken bool // a token was given and does not match
}

// mayResume decides whether the caller (ctx's session, with token) may
// resume agent a.
func (s *Service) mayResume(ctx context.Context, tx Tx, a Agent, token string, now time.Time) (holdVerdict, error) {
	h, err := tx.AgentHolder(ctx, a.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return holdVerdict{ok: true}, nil // never bound (older store, channels and mailbox sets): the first register binds it
	case err != nil:
		return holdVerdict{}, err
	}
	if h.Session == sessionOf(ctx) {
		return holdVerdict{ok: true}, nil
	}
	if token != "" {
		if subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(h.TokenHash)) == 1 {
			return holdVerdict{ok: true}, nil
		}
	}
	if holderGone(ctx, h.Session) || now.Sub(a.LastActiveAt) >= holdLive {
		return holdVerdict{ok: true}, nil // the holder is gone: resuming is the reference's "register again"
	}
	return holdVerdict{badToken: token != ""}, nil
}

// heldText explains, for the answer or the refusal, that name is held.
func heldText(name string, a Agent, v holdVerdict, now time.Time) string {
	ago := now.Sub(a.LastActiveAt).Truncate(time.Second)
	why := fmt.Sprintf("'%s' is held by another live session (active %s ago)", name, ago)
	if v.badToken {
		why += " and the registration_token given is not its token"
	}
	return why
}

// bind makes ctx's session the holder of a and returns the registration
// token to answer: the one the caller proved (token), the one this process
// gave the same session earlier, or a new one.
func (s *Service) bind(ctx context.Context, tx Tx, a Agent, token string, now time.Time) (string, error) {
	session := sessionOf(ctx)
	old, err := tx.AgentHolder(ctx, a.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return "", err
	}
	found := err == nil
	switch {
	case token != "" && found && subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(old.TokenHash)) == 1:
		// proved: keep the token
	case found && old.Session == session:
		if t, ok := s.tokens.Load(a.ID); ok && hashToken(t.(string)) == old.TokenHash {
			return t.(string), nil // nothing changes
		}
		token = newToken() // this process no longer knows it: a new one
	default:
		token = newToken()
	}
	if !found || old.Session != session || old.TokenHash != hashToken(token) {
		if err := tx.SetAgentHolder(ctx, AgentHolder{AgentID: a.ID, Session: session, TokenHash: hashToken(token), BoundAt: now}); err != nil {
			return "", err
		}
	}
	s.tokens.Store(a.ID, token)
	return token, nil
}

// checkSender refuses, with Options.BindSenders, a sender the caller's
// session does not hold and whose token it does not give. An agent nobody
// holds (made by the compatibility sets, or before binding existed) must
// be registered first.
func (s *Service) checkSender(ctx context.Context, tx Tx, sender Agent, token string) error {
	if !s.bindSenders {
		return nil
	}
	h, err := tx.AgentHolder(ctx, sender.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && (h.Session == sessionOf(ctx) ||
		token != "" && subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(h.TokenHash)) == 1) {
		return nil
	}
	return newError("NOT_HOLDER", ErrNotHolder,
		"This session may not send as '%s': this server only lets a session send as the agents it registered (AGENT_MAIL_BIND_SENDERS). "+
			"Call register_agent with name '%s' first (with its registration_token if another session registered it), pass that token as sender_token, or send as your own agent.",
		sender.Name, sender.Name)
}
