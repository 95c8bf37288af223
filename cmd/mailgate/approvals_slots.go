package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/store"
)

// sendSlotsUsed counts the send slots taken in the hour ending at now on
// the store dsn names, as the running servers' gate counts them (the same
// bucket, the same clock); it reserves nothing.
func sendSlotsUsed(ctx context.Context, dsn string, now time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	lim, err := ratelimit.New(ctx, db, 1, time.Hour) // the limit does not change the count
	if err != nil {
		return 0, err
	}
	lim.SetMonotonic(ratelimit.SystemClock)
	return lim.Used(ctx, now)
}

// slotsLeft says how many more emails servers with this limit send within
// the hour, given used (or why it is not known).
func slotsLeft(limit, used int, err error) string {
	if err != nil {
		return fmt.Sprintf("send slots left this hour: unknown (%v)", err)
	}
	return fmt.Sprintf("%d of %d send slots left this hour", max(limit-used, 0), limit)
}
