package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/ratelimit"
)

// accountSlots is what one account's send window has taken.
type accountSlots struct {
	name string
	used int
	err  error
}

// sendSlotsUsed counts, for every account of the home, the send slots
// taken in the hour ending at now on cfg's store, as the running servers'
// gate counts them (each account's own bucket, gate.SendBucket; the same
// clock); it reserves nothing. A home with one account gets one entry.
func sendSlotsUsed(ctx context.Context, cfg *config.Config, now time.Time) []accountSlots {
	names := []string{account.Default}
	if cfg.TokenFile != "" {
		names, _ = account.List(cfg.TokenFile) // on error: the default account, still counted
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, release, err := openStore(ctx, cfg.DB)
	if err != nil {
		return []accountSlots{{name: account.Default, err: err}}
	}
	defer release()
	var out []accountSlots
	for _, n := range names {
		s := accountSlots{name: n}
		// The limit does not change the count.
		lim, err := ratelimit.NewBucket(ctx, db, gate.SendBucket(n), 1, time.Hour)
		if err == nil {
			lim.SetMonotonic(ratelimit.SystemClock)
			s.used, err = lim.Used(ctx, now)
		}
		s.err = err
		out = append(out, s)
	}
	return out
}

// slotsLeft says how many more emails servers with this limit send within
// the hour from each account (or why it is not known): one account, one
// figure; several, each named, since each has its own window.
func slotsLeft(limit int, slots []accountSlots) string {
	one := func(s accountSlots) string {
		if s.err != nil {
			return fmt.Sprintf("unknown (%v)", s.err)
		}
		return fmt.Sprintf("%d of %d", max(limit-s.used, 0), limit)
	}
	if len(slots) == 1 {
		if slots[0].err != nil {
			return "send slots left this hour: " + one(slots[0])
		}
		return one(slots[0]) + " send slots left this hour"
	}
	parts := make([]string, len(slots))
	for i, s := range slots {
		parts[i] = "account " + s.name + " " + one(s)
	}
	return "send slots left this hour: " + strings.Join(parts, ", ")
}
