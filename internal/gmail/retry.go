package gmail

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	retrypolicy "github.com/mailgate/mailgate/internal/retry"
)

// The generated Gmail client never retries; this file is mailgate's retry
// policy for reads and drafts. Sends never come through here (send.go).

// retryAfterRe finds the wait Gmail puts in quota messages
// ("User-rate limit exceeded.  Retry after 2026-09-11T20:00:00.000Z").
var retryAfterRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`Retry after (\d{4}-\d\d-\d\dT[0-9:.]+Z)`) })

// serverWait is how long the server asked us to wait, 0 if it did not say:
// the larger of the Retry-After header (seconds or HTTP date) and a time
// named in the error message.
func serverWait(gerr *googleapi.Error, now time.Time) time.Duration {
	wait := retrypolicy.After(gerr.Header.Get("Retry-After"), now)
	texts := []string{gerr.Message}
	for _, it := range gerr.Errors {
		texts = append(texts, it.Message)
	}
	for _, s := range texts {
		if m := retryAfterRe().FindStringSubmatch(s); m != nil {
			if t, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && t.Sub(now) > wait {
				wait = t.Sub(now)
			}
		}
	}
	return max(wait, 0)
}

// hasReason reports whether any errors[].reason of a Gmail error is one of
// reasons (the only reliable classifier: apierror's Reason() is empty).
func hasReason(gerr *googleapi.Error, reasons ...string) bool {
	for _, it := range gerr.Errors {
		for _, r := range reasons {
			if it.Reason == r {
				return true
			}
		}
	}
	return false
}

// isRateLimit reports a quota rejection: 429, or 403 with a rate-limit
// reason (the same condition arrives as either).
func isRateLimit(gerr *googleapi.Error) bool {
	return gerr.Code == http.StatusTooManyRequests ||
		gerr.Code == http.StatusForbidden && hasReason(gerr, "rateLimitExceeded", "userRateLimitExceeded")
}

// verdict is what to do after a failed attempt.
type verdict int

const (
	permanent verdict = iota
	retryable
	refreshAuth // 401: force a token refresh, then retry once
)

// classify decides whether err is worth another attempt. transport says
// whether network-level failures may be retried (idempotent calls only).
// It may replace err with a typed error for the caller.
func (c *Client) classify(err error, transport bool, scope string) (verdict, time.Duration, error) {
	var reauth *ReauthError
	if errors.As(err, &reauth) {
		return permanent, 0, reauth
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) && rerr.Response != nil && rerr.Response.StatusCode < 500 {
		// The token endpoint refused us (invalid_client, invalid_scope,
		// ...): asking again will not change its mind.
		return permanent, 0, err
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		switch {
		case gerr.Code == http.StatusUnauthorized:
			return refreshAuth, 0, err
		case isRateLimit(gerr):
			return retryable, serverWait(gerr, time.Now()), err
		case gerr.Code == http.StatusForbidden && hasReason(gerr, "insufficientPermissions"):
			return permanent, 0, &PermissionError{Scope: scope, Err: err}
		case gerr.Code >= 500:
			return retryable, serverWait(gerr, time.Now()), err
		}
		return permanent, 0, err
	}
	if transport {
		return retryable, 0, err
	}
	return permanent, 0, err
}

// retry runs call under the read/draft policy: exponential backoff from
// RetryInitial capped at RetryMax per sleep, at most MaxRetries retries,
// server-given waits honoured up to MaxHonouredWait (beyond that the call
// fails with *RateLimitedError), one forced token refresh on 401, every
// retry logged at Info. scope is the OAuth scope the call needs, for the
// insufficient-permission message.
func retry[T any](ctx context.Context, c *Client, op, scope string, transport bool, call func(context.Context) (T, error)) (T, error) {
	retries := c.opts.MaxRetries
	if retries == 0 {
		retries = -1 // Options: none at all
	}
	hb := retrypolicy.NewHinted(retrypolicy.Policy{Initial: c.opts.RetryInitial, Max: c.opts.RetryMax,
		Multiplier: 1.5, Jitter: 0.5, MaxRetries: retries}.BackOff())
	attempt := 0
	refreshed := false
	var lastErr error
	var timer backoff.Timer // nil: backoff's real timer
	if c.newTimer != nil {
		timer = c.newTimer()
	}
	v, err := backoff.RetryNotifyWithTimerAndData(func() (T, error) {
		attempt++
		started := time.Now()
		v, err := call(ctx)
		if err == nil {
			return v, nil
		}
		lastErr = err
		if cerr := ctx.Err(); cerr != nil {
			// The caller gave up; a per-request timeout (the http.Client's)
			// leaves ctx alone and is retried as a transport error.
			if !errors.Is(err, cerr) {
				err = fmt.Errorf("%w (last attempt: %v)", cerr, err)
			}
			lastErr = nil // already reported
			return v, backoff.Permanent(err)
		}
		verdict, wait, err := c.classify(err, transport, scope)
		switch verdict {
		case permanent:
			return v, backoff.Permanent(err)
		case refreshAuth:
			if refreshed || c.refresher == nil || !c.refresher.invalidate(started) {
				return v, backoff.Permanent(&ReauthError{Cause: err})
			}
			refreshed = true
			hb.Now()
			return v, err
		}
		if wait > c.opts.MaxHonouredWait {
			return v, backoff.Permanent(&RateLimitedError{Until: time.Now().Add(wait), Err: err})
		}
		hb.Hint(wait)
		return v, err
	}, backoff.WithContext(hb, ctx), func(err error, d time.Duration) {
		c.log.Info("retrying Gmail call", "op", op, "attempt", attempt, "wait", d, "err", err)
	}, timer)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && lastErr != nil && !errors.Is(lastErr, ctx.Err()) {
		// The context ran out while sleeping between attempts: say what
		// the last attempt failed with, too.
		err = fmt.Errorf("%w (last attempt: %v)", err, lastErr)
	}
	return v, err
}
