package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
)

// watchCmd shows agent-mail traffic as it happens, for the human who runs
// a team of coding agents: one line per message (when, project, who wrote
// to whom, thread, subject) and one per file reservation taken or gone.
// It reads the store through the agent-mail service, as a server would,
// and follows it by polling: servers on other processes (or, on
// PostgreSQL, other hosts) write it, so there is nothing to subscribe to.
// Bodies are never shown: they are the agents' to fetch, and a terminal is
// often shared on a screen.
func watchCmd(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	project := fs.String("project", "", "only this project: its absolute path or slug, `KEY` (default: every project)")
	once := fs.Bool("once", false, "print the recent traffic and the live reservations, then exit")
	interval := fs.Duration("interval", time.Second, "how often to look for new messages")
	limit := fs.Int("limit", 20, "how many earlier messages per project to show at start")
	execCmd := fs.String("exec", "", "run `CMD` (through the shell) once for each message that arrives from now on; the message is in its environment: MAILGATE_MESSAGE_ID, _PROJECT, _FROM, _SUBJECT, _THREAD_ID, _IMPORTANCE, _ACK_REQUIRED")
	agent := fs.String("agent", "", "with --exec: only messages this agent `NAME` receives (To, Cc or Bcc)")
	execTimeout := fs.Duration("exec-timeout", time.Minute, "with --exec: stop a command that runs longer than this")
	cfg, err := loadConfig(fs, args, env)
	if err != nil {
		return helpOrError(fs, err, env.stdout)
	}
	if fs.NArg() > 0 {
		return usageError("watch", "unexpected argument %q", fs.Arg(0))
	}
	if *interval < 10*time.Millisecond {
		return usageError("watch", "--interval %s is too short", *interval)
	}
	switch {
	case *execCmd != "" && *once:
		return usageError("watch", "--exec runs for messages that arrive while watch follows; it cannot go with --once")
	case *agent != "" && *execCmd == "":
		return usageError("watch", "--agent chooses whose messages run --exec; give --exec too")
	case *execTimeout <= 0:
		return usageError("watch", "--exec-timeout must be positive")
	}
	db, err := store.Open(ctx, cfg.DB)
	if err != nil {
		return fmt.Errorf("MAILGATE_DB %s: %w", store.Describe(cfg.DB), err)
	}
	defer db.Close()
	svc, err := amstore.NewService(ctx, db, agentmail.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("opening the agent-mail store: %w", err)
	}
	defer svc.Close()
	w := &watcher{svc: svc, out: env.stdout, project: *project, cursor: map[string]int64{}, held: map[string]map[int64]agentmail.ReservationView{}}
	if *execCmd != "" {
		w.exec = &execHook{command: *execCmd, agent: *agent, timeout: *execTimeout, stdout: env.stderr, stderr: env.stderr}
	}
	// The first poll (the history) runs before "following" is printed and
	// its lines are shown after it: what --exec answers starts where that
	// poll ended, so a message sent once "following" is out is never taken
	// for history (it was, when the line came first: a hook that never ran).
	var history bytes.Buffer
	out := w.out
	w.out = &history
	err = w.poll(ctx, *limit)
	w.out = out
	if err != nil {
		return err
	}
	fmt.Fprintf(w.out, "Agent mail in %s", store.Describe(cfg.DB))
	if *once {
		fmt.Fprintln(w.out)
	} else {
		fmt.Fprintln(w.out, ", following (Ctrl-C to stop)")
	}
	if _, err := w.out.Write(history.Bytes()); err != nil {
		return err
	}
	if *once {
		return nil
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := w.poll(ctx, -1); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// watcher holds what has been shown: per project, the last message id and
// the active reservations.
type watcher struct {
	svc     *agentmail.Service
	out     io.Writer
	project string
	exec    *execHook                                      // --exec, or nil
	cursor  map[string]int64                               // project key → last message id shown
	held    map[string]map[int64]agentmail.ReservationView // project key → active reservations shown
	started bool
}

// poll prints what is new since the last call. The first call (history >=
// 0) prints the last history messages of each project and the live
// reservations.
func (w *watcher) poll(ctx context.Context, history int) error {
	projects, err := w.svc.ListProjects(ctx)
	if err != nil {
		return err
	}
	if w.project != "" {
		projects = slices.DeleteFunc(projects, func(p agentmail.ProjectView) bool {
			return p.HumanKey != w.project && p.Slug != w.project
		})
		if len(projects) == 0 && !w.started {
			fmt.Fprintf(w.out, "No project %q yet: waiting for an agent to start it (ensure_project).\n", w.project)
		}
	} else if len(projects) == 0 && !w.started {
		fmt.Fprintln(w.out, "No projects yet: waiting for an agent to start one (ensure_project).")
	}
	w.started = true
	var evs []event
	for _, p := range projects {
		key := p.HumanKey
		cursor, seen := w.cursor[key]
		var ms []agentmail.MessagePayload
		switch {
		case !seen && history >= 0:
			ms, cursor, err = w.tail(ctx, key, history)
		default: // a project seen before, or one started while we watch (from its start)
			ms, err = w.svc.MessagesAfter(ctx, key, cursor, 1000)
		}
		if err != nil {
			return err
		}
		arrived := seen || history < 0 // not the history shown at start
		for _, m := range ms {
			evs = append(evs, event{at: stamp(m.CreatedTS), line: messageLine(p, m)})
			cursor = max(cursor, m.ID)
			if w.exec != nil && arrived {
				w.exec.run(ctx, p, m)
			}
		}
		w.cursor[key] = cursor
		rs, err := w.reservations(ctx, p)
		if err != nil {
			return err
		}
		evs = append(evs, rs...)
	}
	// In time order across messages, reservations and projects, as they
	// happened (a reservation taken before a message is shown before it).
	slices.SortStableFunc(evs, func(a, b event) int { return a.at.Compare(b.at) })
	for _, e := range evs {
		fmt.Fprintln(w.out, e.line)
	}
	return nil
}

// event is one line to show, with when it happened.
type event struct {
	at   time.Time
	line string
}

// stamp is a store timestamp as a time; nil (or unreadable) is now.
func stamp(ts *string) time.Time {
	if ts != nil {
		if t, err := time.Parse(time.RFC3339Nano, *ts); err == nil {
			return t
		}
	}
	return time.Now()
}

// tail returns a project's last n messages, oldest first, and the id of
// its newest message.
func (w *watcher) tail(ctx context.Context, key string, n int) ([]agentmail.MessagePayload, int64, error) {
	var last []agentmail.MessagePayload
	var after int64
	for {
		page, err := w.svc.MessagesAfter(ctx, key, after, 1000)
		if err != nil {
			return nil, 0, err
		}
		if len(page) > 0 {
			after = page[len(page)-1].ID
		}
		last = append(last, page...)
		if len(last) > n {
			last = slices.Clone(last[len(last)-n:])
		}
		if len(page) < 1000 {
			return last, after, nil
		}
	}
}

// reservations returns the lines of the reservations taken and gone since
// the last look.
func (w *watcher) reservations(ctx context.Context, p agentmail.ProjectView) ([]event, error) {
	rs, err := w.svc.ListReservations(ctx, p.HumanKey, true)
	if err != nil {
		return nil, err
	}
	var evs []event
	old := w.held[p.HumanKey]
	now := map[int64]agentmail.ReservationView{}
	for _, r := range rs {
		now[r.ID] = r
		if _, ok := old[r.ID]; !ok {
			evs = append(evs, event{at: stamp(r.CreatedTS), line: reservationLine(p, r, true)})
		}
	}
	var gone []agentmail.ReservationView
	for id, r := range old {
		if _, ok := now[id]; !ok {
			gone = append(gone, r)
		}
	}
	slices.SortFunc(gone, func(a, b agentmail.ReservationView) int { return int(a.ID - b.ID) })
	for _, r := range gone {
		evs = append(evs, event{at: time.Now(), line: reservationLine(p, r, false)})
	}
	w.held[p.HumanKey] = now
	return evs, nil
}

// messageLine is one message: time, project, #id, sender → recipients,
// thread and subject.
func messageLine(p agentmail.ProjectView, m agentmail.MessagePayload) string {
	to := strings.Join(clean(m.To), ", ")
	if len(m.CC) > 0 {
		to += " (cc " + strings.Join(clean(m.CC), ", ") + ")"
	}
	if to == "" {
		to = "(bcc only)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  #%d  %s → %s", when(m.CreatedTS), terminalSafe(p.Slug), m.ID, terminalSafe(m.From), to)
	if m.ThreadID != nil && *m.ThreadID != "" {
		fmt.Fprintf(&b, "  [%s]", terminalSafe(*m.ThreadID))
	}
	fmt.Fprintf(&b, "  %q", terminalSafe(m.Subject))
	switch {
	case m.Importance == "high" || m.Importance == "urgent":
		fmt.Fprintf(&b, "  !%s", m.Importance)
	}
	if m.AckRequired {
		b.WriteString("  (ack required)")
	}
	return b.String()
}

// reservationLine is a reservation taken (with its kind, expiry and
// reason) or gone (released or expired: the list of active ones no longer
// holds it).
func reservationLine(p agentmail.ProjectView, r agentmail.ReservationView, taken bool) string {
	if !taken {
		return fmt.Sprintf("%s  %s  %s no longer holds %s (released or expired)", when(nil), terminalSafe(p.Slug), terminalSafe(r.Agent), terminalSafe(r.PathPattern))
	}
	kind := "shared"
	if r.Exclusive {
		kind = "exclusive"
	}
	line := fmt.Sprintf("%s  %s  %s reserved %s (%s, until %s)", when(r.CreatedTS), terminalSafe(p.Slug), terminalSafe(r.Agent), terminalSafe(r.PathPattern), kind, when(r.ExpiresTS))
	if r.Reason != "" {
		line += fmt.Sprintf(" %q", terminalSafe(r.Reason))
	}
	if r.Stale {
		line += "  STALE: " + terminalSafe(strings.Join(r.StaleReasons, "; "))
	}
	return line
}

// when shows a store timestamp in local time: the clock time for today,
// with the date otherwise; nil is now.
func when(ts *string) string {
	t := stamp(ts).Local()
	if y, m, d := t.Date(); time.Now().Local().Year() == y && time.Now().Local().Month() == m && time.Now().Local().Day() == d {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 02 15:04")
}

func clean(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = terminalSafe(n)
	}
	return out
}

// terminalSafe keeps what an agent wrote from acting on the terminal:
// control characters (escape sequences, carriage returns) and bidirectional
// overrides are shown as U+FFFD, never passed on.
func terminalSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r), r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F:
			return '\uFFFD'
		}
		return r
	}, s)
}
