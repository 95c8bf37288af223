package gate

import (
	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// Several Gmail accounts (issue 27 item 2): each has its own send limit,
// SEND_LIMIT_PER_HOUR in its own rolling window, held in the store like
// the default account's (whose bucket keeps its name, so a home with one
// account counts as it always did).

// SendBucket is the rate-limit bucket of account's sends.
func SendBucket(acct string) string {
	if account.IsDefault(acct) {
		return ratelimit.BucketSend
	}
	return ratelimit.BucketSend + ":" + acct
}

// limiterFor is l over acct's own bucket (nil stays nil).
func limiterFor(l *ratelimit.Limiter, acct string) *ratelimit.Limiter {
	if l == nil {
		return nil
	}
	return l.WithBucket(SendBucket(acct))
}
