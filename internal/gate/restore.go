package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// RestoreSendHistory rebuilds the send window of l from the audit log in
// dir, for a store that was just created beside a vault with history (the
// old store was lost or deleted): without it the new store would allow a
// full quota at once, on top of the sends of the last hour. Every attempt
// that may have reached Gmail has a fsynced "claim" line before it, so the
// claims of the last window are the slots it held, less those the gate
// gave back (a claim that failed; a send that provably never reached
// Google). Trash takes no slot. It returns the number of slots restored.
func RestoreSendHistory(ctx context.Context, dir string, l *ratelimit.Limiter, now time.Time) (int, error) {
	since := now.Add(-l.Window())
	var entries []audit.Entry
	// One file per UTC day: the window lies in the days from since to now.
	for day := since.UTC().Truncate(24 * time.Hour); !day.After(now.UTC()); day = day.Add(24 * time.Hour) {
		es, err := audit.ReadFile(filepath.Join(dir, day.Format(time.DateOnly)+".jsonl"))
		var torn *audit.TornError
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil && !errors.As(err, &torn):
			return 0, fmt.Errorf("reading the audit log: %w", err)
		}
		entries = append(entries, es...)
	}
	released := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.ActionType == ActionClaim && (e.Result == audit.ResultError || e.Result == audit.ResultRejected),
			e.ActionType == ActionSend && e.Result == audit.ResultError && strings.HasPrefix(e.Detail, "never reached Google"):
			released[e.CorrelationID] = true
		}
	}
	past := map[string][]ratelimit.Past{} // by account: each has its own window (account.go)
	var accounts []string
	for _, e := range entries {
		if e.ActionType != ActionClaim || e.Result != audit.ResultPending || e.Tool == "trash_email" ||
			released[e.CorrelationID] || !e.Time.After(since) {
			continue
		}
		// A line dated after now (a clock stepped back since) counts as now.
		at := e.Time
		if at.After(now) {
			at = now
		}
		if _, ok := past[e.Account]; !ok {
			accounts = append(accounts, e.Account)
		}
		past[e.Account] = append(past[e.Account], ratelimit.Past{At: at, Ref: "audit:" + e.CorrelationID})
	}
	n := 0
	for _, a := range accounts {
		k, err := limiterFor(l, a).Restore(ctx, past[a])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
