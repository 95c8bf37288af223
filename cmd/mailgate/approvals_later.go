package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/schedule"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/warnings"
)

// The scheduled emails (send_at) in `mailgate approvals`: listed with
// their time, and withdrawn with `mailgate approvals cancel ID`.

// openSchedule opens the store's schedule when the store exists.
func openSchedule(ctx context.Context, cfg *config.Config) (*schedule.Store, func(), error) {
	if !store.IsPostgres(cfg.DB) {
		if _, err := os.Stat(cfg.DB); err != nil {
			return nil, func() {}, nil
		}
	}
	db, release, err := openStore(ctx, cfg.DB)
	if err != nil {
		return nil, func() {}, err
	}
	st, err := schedule.New(ctx, db)
	if err != nil {
		release()
		return nil, func() {}, err
	}
	return st, release, nil
}

// printScheduled lists the approved emails waiting for their time.
func printScheduled(ctx context.Context, w io.Writer, cfg *config.Config) {
	st, closeStore, err := openSchedule(ctx, cfg)
	defer closeStore()
	if err != nil {
		fmt.Fprintf(w, "\nScheduled: cannot be listed: %v\n", err)
		return
	}
	if st == nil {
		return
	}
	list, err := st.Pending(ctx)
	if err != nil {
		fmt.Fprintf(w, "\nScheduled: cannot be listed: %v\n", err)
		return
	}
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "\nScheduled (%d): approved, sent once at their time by a running mailgate server (Done/ holds each file)\n", len(list))
	for _, e := range list {
		what := "send to " + e.Final.Address()
		switch e.Final.Kind {
		case approval.KindReply:
			what = "reply in thread " + e.Final.ThreadID + " to " + e.Final.Address()
		case approval.KindForward:
			what = "forward of message " + e.Final.MessageID + " to " + e.Final.Address()
		}
		if e.Final.From != "" {
			what = "from " + e.Final.From + ": " + what
		}
		state := "at " + approval.FormatSendAt(e.SendAt) + " (UTC)"
		if e.State != "scheduled" {
			state += ", " + e.State + " now (" + e.TakenBy + ")"
		}
		fmt.Fprintf(w, "  %s  %s  %s  %q\n", strings.TrimSuffix(e.DoneName, ".md"), state, warnings.Escape(what), clipText(warnings.Escape(e.Final.Subject), 80))
	}
	fmt.Fprint(w, "Withdraw one before its time with: mailgate approvals cancel ID\n")
}

// cancelScheduled withdraws the scheduled email id (its Done file's name,
// or a unique start of it): never sent, its file moved to Rejected/.
func cancelScheduled(ctx context.Context, w io.Writer, cfg *config.Config, v *approval.Vault, id string) error {
	st, closeStore, err := openSchedule(ctx, cfg)
	defer closeStore()
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("no scheduled email %q: there is no store yet (%s)", id, cfg.DB)
	}
	list, err := st.Pending(ctx)
	if err != nil {
		return err
	}
	id = strings.TrimSuffix(strings.TrimSpace(id), ".md")
	var match []schedule.Entry
	for _, e := range list {
		name := strings.TrimSuffix(e.DoneName, ".md")
		if name == id {
			match = []schedule.Entry{e}
			break
		}
		if id != "" && strings.HasPrefix(name, id) {
			match = append(match, e)
		}
	}
	switch len(match) {
	case 0:
		return fmt.Errorf("no scheduled email waiting matches %q (already sent, being sent, or withdrawn?); list them with: mailgate approvals", id)
	case 1:
	default:
		return fmt.Errorf("%q matches %d scheduled emails: give more of the name (mailgate approvals lists them)", id, len(match))
	}
	e := match[0]
	if e.State != "scheduled" {
		return fmt.Errorf("%s is being sent right now (%s): too late to withdraw it", strings.TrimSuffix(e.DoneName, ".md"), e.TakenBy)
	}
	host, _ := os.Hostname()
	name, err := st.Cancel(ctx, v, e.DoneName, fmt.Sprintf("mailgate approvals cancel (%s:%d)", host, os.Getpid()), time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Withdrawn: %s/%s → %s/%s\n  it will not be sent (it was to go at %s UTC to %s).\n",
		approval.DirDone, e.DoneName, approval.DirRejected, name, approval.FormatSendAt(e.SendAt), e.Final.Address())
	return nil
}
