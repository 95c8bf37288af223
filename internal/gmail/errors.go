package gmail

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// Sentinel errors, matched with errors.Is. The messages are phrased for a
// human because the tool layer may show them as they are.
var (
	// ErrNotFound: the message id is unknown (404) or malformed (400).
	ErrNotFound = errors.New("message not found or no longer accessible")
	// ErrThreadNotFound: the thread id is unknown (404) or is not a Gmail
	// API thread id at all (400; ids from web URLs differ).
	ErrThreadNotFound = errors.New("thread not found or no longer accessible (use a Gmail API thread id, not one from a web URL)")
	// ErrNotInThread: the message to reply to is not part of the thread.
	ErrNotInThread = errors.New("message is not part of that thread")
	// ErrNoMessageID: the parent has no Message-ID header, so a reply could
	// not be threaded; refused rather than sent unthreaded.
	ErrNoMessageID = errors.New("message has no Message-ID header, so a threaded reply is impossible")
	// ErrDraftNotFound: the draft id is unknown (404: sent or deleted
	// meanwhile) or malformed (400).
	ErrDraftNotFound = errors.New("draft not found (it may have been sent or deleted)")
	// ErrNoRefreshToken is the cause inside a *ReauthError when the stored
	// token has expired and holds no refresh token.
	ErrNoRefreshToken = errors.New("the stored token has expired and has no refresh token")
)

// ReauthError means Gmail access is gone and only the user can restore it
// by signing in again: the refresh token was revoked or expired
// (invalid_grant), or there is no usable token at all.
type ReauthError struct {
	Cause error
}

func (e *ReauthError) Error() string {
	if isInvalidGrant(e.Cause) {
		return "Gmail access has expired or was revoked (invalid_grant): run `mailgate auth` to sign in again. " +
			"Apps left in \"Testing\" lose their refresh token after 7 days."
	}
	return fmt.Sprintf("Gmail is not authorized (%v): run `mailgate auth` to sign in.", e.Cause)
}

func (e *ReauthError) Unwrap() error { return e.Cause }

// isInvalidGrant reports an OAuth token-endpoint refusal of the refresh
// token. Typed check only: the message text differs between code paths.
func isInvalidGrant(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && re.ErrorCode == "invalid_grant"
}

// RateLimitedError means Gmail asked us to wait longer than we are willing
// to block a tool call (Options.MaxHonouredWait), e.g. a daily sending
// limit that lifts hours from now.
type RateLimitedError struct {
	Until time.Time
	Err   error // the Gmail error that named the time
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("Gmail rate limit: retry after %s (%v)", e.Until.UTC().Format(time.RFC3339), e.Err)
}

func (e *RateLimitedError) Unwrap() error { return e.Err }

// PermissionError means the OAuth grant lacks a scope the call needs
// (403 insufficientPermissions). Retrying cannot help; the user must
// authorize again and tick the missing permission.
type PermissionError struct {
	Scope string // the scope the call needs
	Err   error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("Gmail refused the request: the access granted to mailgate lacks %s; "+
		"run `mailgate auth` again and grant it (%v)", e.Scope, e.Err)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// SendError is returned by Send. MayHaveReached tells the caller whether
// Google may have received (and so may deliver) the message: false only
// when that is provably not the case, so that a caller may retry without
// risking a duplicate. When true, do not resend blindly: reconcile first
// (search Sent for the message).
type SendError struct {
	Err            error
	MayHaveReached bool
	// Answered is true when Google answered with an error status: it
	// received the request. With MayHaveReached false that is a refusal
	// (4xx: not sent); the request still counted against Google's limits.
	Answered bool
}

// NeverReached reports that the request provably never reached Google (no
// connection was made), for callers that give back a send slot only then.
func (e *SendError) NeverReached() bool { return !e.MayHaveReached && !e.Answered }

// Refused reports that Google answered and did not send the message.
func (e *SendError) Refused() bool { return !e.MayHaveReached && e.Answered }

func (e *SendError) Error() string {
	if e.MayHaveReached {
		return fmt.Sprintf("sending message: %v (the outcome is unknown: Google may have received it; check Sent before retrying)", e.Err)
	}
	return fmt.Sprintf("sending message: %v (not sent)", e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }
