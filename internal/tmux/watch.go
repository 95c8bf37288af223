package tmux

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The mailbox set's clients live in tmux windows: when the tmux session
// ends, the server (mailgate serve with the mailbox tools) must end too.

// ErrWatchedSessionEnded is what WatchSession returns when the tmux
// session the server runs in is gone; serve exits with status 1 on it.
var ErrWatchedSessionEnded = errors.New("the tmux session ended: the mailbox server exits with its session")

// WatchSession blocks until ctx ends (nil) or the tmux session this
// process runs in disappears (ErrWatchedSessionEnded). The end comes from the
// process's control-mode client (tmux's %exit, or its server gone), within
// moments of the session's end; where control mode cannot start, it polls
// `tmux has-session` every poll (250 ms when 0) instead. Outside tmux it
// returns nil at once.
func WatchSession(ctx context.Context, getenv func(string) string, poll time.Duration) error {
	env, inside := EnvFrom(getenv)
	if !inside {
		return nil
	}
	for {
		f, err := Shared(ctx, env)
		if err != nil {
			return pollSession(ctx, env, poll)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.Done():
		}
		if errors.Is(f.Err(), ErrSessionEnded) {
			return ErrWatchedSessionEnded
		}
		// Detached by someone, the session lives: follow it again.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pollSession is WatchSession without control mode: one
// `tmux has-session` every poll.
func pollSession(ctx context.Context, env Env, poll time.Duration) error {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	sess, err := Exec{Env: env}.Session(ctx)
	if err != nil || sess == "" {
		return fmt.Errorf("%w (%v)", ErrWatchedSessionEnded, err)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		err := env.HasSession(ctx, sess)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrSessionEnded) { // a slow tmux is not a gone session
			return ErrWatchedSessionEnded
		}
	}
}
